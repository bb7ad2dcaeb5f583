// One naming scheme for structured log events: `<area>.<event-name>`, both parts lower-case
// kebab-case. Reads every `.log(level, "name"` call in src/ (docs/operations.md lists them).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src", import.meta.url));
const NAME = /^[a-z]+(-[a-z]+)*\.[a-z0-9]+(-[a-z0-9]+)*$/;
// `.log("warn", "name"`, `.log(level, "name"`, `.log(cond ? "info" : "warn", "name"`, and a name built as `"prefix-" + reason`.
const CALL = /\.log\(\s*(?:"(?:debug|info|warn|error)"|[A-Za-z_.]+|[^,()]*\?[^,()]*:[^,()]*),\s*"([^"]+)"(\s*\+)?/g;

function sources(): Array<{ file: string; text: string }> {
  return readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => ({ file: f, text: readFileSync(join(SRC, f), "utf8") }));
}

describe("log event names", () => {
  const found: Array<{ file: string; name: string }> = [];
  for (const { file, text } of sources()) {
    for (const m of text.matchAll(CALL)) found.push({ file, name: m[2] ? `${m[1]}x` : m[1]! });
  }

  it("are found across the code (the scan is not vacuous)", () => {
    expect(found.length).toBeGreaterThan(100);
    expect(new Set(found.map((f) => f.name.split(".")[0])).size).toBeGreaterThan(10);
  });

  it("are all <area>.<event-name> in kebab-case", () => {
    expect(found.filter((f) => !NAME.test(f.name))).toEqual([]);
  });
});
