// Conformance with the official ACP TypeScript SDK (run from ../shared/conformance, beside the
// clone, as in CI): scripts/conformance/sdk-dm.sh starts `acp-group server --tls`, the agent dave
// (`id create`, `join`, `run`, its owner owner.<domain>) and the SDK's own client, each as its own
// process. The owner's DM must be answered in its session within 5 s; a stranger's must not be,
// and dave's log must say why (and hold no dispatch for it). In a plain clone without the kit this
// test is skipped, and says so in capitals on stderr and in its title: nothing was checked.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const KIT = process.env.ACP_CONFORMANCE_DIR ?? join(REPO, "..", "shared", "conformance");
const present = existsSync(join(KIT, "sdk-dm.mjs"));

if (!present) {
  process.stderr.write(
    `\n${"=".repeat(78)}\n  CONFORMANCE SKIPPED: the official SDK kit is not at ${KIT}.\n` +
      `  The SDK's direct messages were NOT sent to our agent. Put the kit at\n` +
      `  ../shared/conformance (or set ACP_CONFORMANCE_DIR) and run npm test again.\n${"=".repeat(78)}\n\n`,
  );
}

describe("the official SDK DMs an agent run by `acp-group run` (../shared/conformance)", () => {
  it.skipIf(!present)(
    present
      ? "the owner's DM through the SDK is answered in its session; a stranger's gets no answer and dave's log says why"
      : "SKIPPED — NOT CHECKED: the conformance kit ../shared/conformance is absent",
    () => {
      const run = spawnSync("bash", [join(REPO, "scripts/conformance/sdk-dm.sh")], {
        cwd: REPO,
        encoding: "utf8",
        timeout: 280_000,
        env: { ...process.env, NODE: process.execPath, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ACP_CONFORMANCE_DIR: KIT },
      });
      const output = `${run.stdout}\n${run.stderr}`;
      expect(run.status, output).toBe(0);
      expect(output).toMatch(/sdk-dm: ok: dave\.acp\.local answered: \[offline responder\] heard owner\.acp\.local: "Dave, can you hear me\?"/);
      expect(output).toMatch(/sdk-dm: ok: no answer from dave\.acp\.local in 5000 ms/);
      expect(output).toMatch(/"event":"direct\.refused".*"peer":"stranger\.acp\.local","reason":"not-allowed"/);
      // Within a few seconds (the script fails past 5 s), and no model call for the stranger.
      expect(output).toMatch(/PASS: owner\.acp\.local \(official SDK\) DMed dave\.acp\.local and got its answer in the same session, \d+ ms after the send/);
      expect(output).toContain("dave's log: one dispatch for owner.acp.local, none for stranger.acp.local");
      expect(output).toContain("[dm stranger.acp.local] refused: not-allowed (nothing reaches the model)");
      // It leaves nothing behind: no process of its network or its agent (they hold a key's directory).
      const work = /sdk-dm\.sh: work dir (\S+)/.exec(output)?.[1];
      expect(work, "the script names its work dir").toBeDefined();
      const ps = spawnSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
      expect(ps.stdout.split("\n").filter((l) => l.includes(work!))).toEqual([]);
      expect(existsSync(work!)).toBe(false);
    },
    300_000,
  );
});
