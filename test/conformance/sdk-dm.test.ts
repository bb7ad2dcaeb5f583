// Conformance with the official ACP TypeScript SDK (run from ../shared/conformance, beside the
// clone, as in CI): scripts/conformance/sdk-dm.sh starts `acp-group server --tls`, the agent dave
// (`id create`, `join`, `run`, its owner owner.<domain>) and the SDK's own client, each as its own
// process. The owner's DM must be answered in its session; a stranger's must not be, and dave's
// log must say why. In a plain clone without the kit this test is skipped, and says so in
// capitals on stderr and in its title: nothing was checked.
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
      expect(output).toMatch(/sdk-dm: ok: dave\d+\.acp\.local answered: \[offline responder\] heard owner\d+\.acp\.local: "Dave, can you hear me\?"/);
      expect(output).toMatch(/sdk-dm: ok: no answer from dave\d+\.acp\.local in 5000 ms/);
      expect(output).toMatch(/"event":"direct\.refused".*"peer":"stranger\d+\.acp\.local","reason":"not-allowed"/);
    },
    300_000,
  );
});
