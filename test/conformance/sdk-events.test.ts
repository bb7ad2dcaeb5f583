// Conformance with the official ACP TypeScript SDK (run from ../shared/conformance, beside the
// clone, as in CI): scripts/conformance/sdk-events.sh starts `acp-group server --tls`, joins the
// SDK's own group event handler to the lobby, and has a person join through `acp-group chat`; the
// SDK's handler must report the join. In a plain clone without the kit this test is skipped, and
// says so in capitals on stderr and in its title: nothing was checked.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const KIT = process.env.ACP_CONFORMANCE_DIR ?? join(REPO, "..", "shared", "conformance");
const present = existsSync(join(KIT, "sdk-events.mjs"));

if (!present) {
  process.stderr.write(
    `\n${"=".repeat(78)}\n  CONFORMANCE SKIPPED: the official SDK kit is not at ${KIT}.\n` +
      `  The SDK's group event handler was NOT run against our server. Put the kit at\n` +
      `  ../shared/conformance (or set ACP_CONFORMANCE_DIR) and run npm test again.\n${"=".repeat(78)}\n\n`,
  );
}

describe("the official SDK against acp-group server (../shared/conformance)", () => {
  it.skipIf(!present)(
    present
      ? "the SDK's own group event handler sees a person join the lobby through `acp-group chat`"
      : "SKIPPED — NOT CHECKED: the conformance kit ../shared/conformance is absent",
    () => {
      const run = spawnSync("bash", [join(REPO, "scripts/conformance/sdk-events.sh")], {
        cwd: REPO,
        encoding: "utf8",
        timeout: 280_000,
        env: { ...process.env, NODE: process.execPath, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`, ACP_CONFORMANCE_DIR: KIT },
      });
      const output = `${run.stdout}\n${run.stderr}`;
      expect(run.status, output).toBe(0);
      expect(output).toMatch(/sdk-events: ok: saw dana\d+\.acp\.local join: member_joined via /);
    },
    300_000,
  );
});
