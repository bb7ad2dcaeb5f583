// Conformance as a user meets it, with the official ACP TypeScript SDK as the witness (the kit in
// ../shared/conformance beside the clone, as in CI): scripts/conformance/sdk-witness.sh runs every
// part as its own process from the command line — `acp-group server --tls`; an identity the SDK
// creates in its own layout under its default empty seed password; `acp-group import-evol` (one
// command), `join`, `run`; a member on the SDK that asks in the lobby and must be answered; the
// SDK's own group event handler, joined to the lobby, which must see a person join through
// `acp-group chat`. In a plain clone without the kit this test is skipped and says so in capitals
// on stderr and in its title: nothing was checked.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const KIT = process.env.ACP_CONFORMANCE_DIR ?? join(REPO, "..", "shared", "conformance");
const present = ["build.sh", "dns-shim.mjs", "sdk-dm.mjs", "sdk-member.mjs", "sdk-events.mjs"].every((f) => existsSync(join(KIT, f)));

if (!present) {
  process.stderr.write(
    `\n${"=".repeat(78)}\n  CONFORMANCE SKIPPED: the official SDK kit is not (whole) at ${KIT}.\n` +
      `  scripts/conformance/sdk-witness.sh was NOT run: no SDK-made identity imported, no SDK member\n` +
      `  answered, no SDK event handler checked. Put the kit at ../shared/conformance (or set\n` +
      `  ACP_CONFORMANCE_DIR) and run npm test again.\n${"=".repeat(78)}\n\n`,
  );
}

describe("the official SDK as witness of the user's path (../shared/conformance)", () => {
  it.skipIf(!present)(
    present
      ? "an SDK-made identity is imported in one command, joined, run and answers an SDK member; the SDK's event handler sees a person join through `acp-group chat`"
      : "SKIPPED — NOT CHECKED: the conformance kit ../shared/conformance is absent",
    () => {
      const run = spawnSync("bash", [join(REPO, "scripts/conformance/sdk-witness.sh")], {
        cwd: REPO,
        encoding: "utf8",
        timeout: 280_000,
        env: { ...process.env, NODE: process.execPath, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ACP_CONFORMANCE_DIR: KIT },
      });
      const output = `${run.stdout}\n${run.stderr}`;
      expect(run.status, output).toBe(0);
      const lines = run.stdout.split("\n");
      expect(lines.some((l) => /^sdk-witness: 2\. identity dave\.acp\.local created in .* \(seed password empty, the SDK default\)/.test(l)), output).toBe(true);
      expect(lines.some((l) => l.startsWith("sdk-witness: 3. acp-group import-evol: imported dave.acp.local from ")), output).toBe(true);
      expect(lines, output).toContain("sdk-witness:    acp-group run: agents online: dave (dave.acp.local) in lobby");
      expect(output).toMatch(/sdk-witness: 5\. ok: dave\.acp\.local answered in lobby: .*"Dave, are you there\?"/);
      expect(output).toMatch(/sdk-witness: {4}ok: saw dana\d+\.acp\.local join: member_joined via /);
      expect(lines.at(-2)).toMatch(/^sdk-witness: PASS: /);
      // Nothing it started outlives it: no process names its work dir (the server and `run` once did).
      const work = /^sdk-witness: work dir (\S+) /m.exec(run.stdout)?.[1];
      expect(work, output).toBeTruthy();
      const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
      expect(ps.stdout.split("\n").filter((l) => l.includes(work!))).toEqual([]);
    },
    300_000,
  );
});
