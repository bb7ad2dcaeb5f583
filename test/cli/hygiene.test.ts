// The command as a shell sees it, in child processes: `--version`; output piped into a reader that
// stops early ends quietly (no EPIPE stack); the installed command on a Node older than the floor
// says which Node it needs before any module can fail.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin", "acp-group.mjs");
const work = mkdtempSync(join(tmpdir(), "acp-hygiene-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("CLI hygiene", () => {
  it("--version prints the package's version", () => {
    const r = spawnSync(process.execPath, [BIN, "--version"], { encoding: "utf8" });
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect([r.status, r.stdout, r.stderr]).toEqual([0, `acp-group ${version}\n`, ""]);
  }, 30_000);

  it("`replay … | head -2` ends quietly: two lines and no EPIPE stack", () => {
    const log = join(ROOT, "test", "fixtures", "irc-dev", "ubuntu-2010-08-17.jsonl");
    const r = spawnSync("sh", ["-c", `"${process.execPath}" "${BIN}" replay "${log}" --persona gos | head -2`], { encoding: "utf8" });
    expect(r.stdout.split("\n").filter(Boolean)).toHaveLength(2);
    expect(r.stderr).not.toContain("EPIPE");
    expect(r.stderr).not.toContain("    at ");
  }, 60_000);

  it("the installed bin on Node 20 says which Node it needs (exit 1), before importing anything", () => {
    // dist/cli/bin.js is compiled from src/cli/bin.ts; compiled alone here, so any import it made before
    // the check would fail to resolve instead of printing the message.
    const js = ts.transpileModule(readFileSync(join(ROOT, "src", "cli", "bin.ts"), "utf8"), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, rewriteRelativeImportExtensions: true },
    }).outputText;
    const bin = join(work, "bin.js");
    writeFileSync(bin, js);
    writeFileSync(join(work, "package.json"), JSON.stringify({ type: "module" }));
    const old = "data:text/javascript," + encodeURIComponent('Object.defineProperty(process.versions, "node", { value: "20.11.1" });');
    const r = spawnSync(process.execPath, ["--import", old, bin, "id", "list"], { encoding: "utf8" });
    expect([r.status, r.stdout, r.stderr]).toEqual([1, "", "acp-group needs Node >= 22 (this is v20.11.1); install a newer Node and run it again.\n"]);
  }, 30_000);
});
