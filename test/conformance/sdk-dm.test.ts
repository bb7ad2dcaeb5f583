// Conformance with the official ACP TypeScript SDK (run from ../shared/conformance, beside the
// clone, as in CI): scripts/conformance/sdk-dm.sh starts `acp-group server --tls`, the agent dave
// (`id create`, `join`, `run`, its owner owner.<domain>) and the SDK's own client, each as its own
// process. The owner's DM must be answered in its session within 5 s; a stranger's must not be,
// and dave's log must say why (and hold no dispatch for it). In a plain clone without the kit this
// test is skipped, and says so in capitals on stderr and in its title: nothing was checked.
import { describe, expect, it } from "vitest";
import { expectNothingLeft, kitPresent, NOT_CHECKED, runConformanceScript } from "./kit.ts";

const present = kitPresent(["sdk-dm.mjs", "build.sh", "dns-shim.mjs"], ["The SDK's direct messages were NOT sent to our agent."]);

describe("the official SDK DMs an agent run by `acp-group run` (../shared/conformance)", () => {
  it.skipIf(!present)(
    present
      ? "the owner's DM through the SDK is answered in its session; a stranger's gets no answer and dave's log says why"
      : NOT_CHECKED,
    () => {
      const { status, output } = runConformanceScript("sdk-dm.sh");
      expect(status, output).toBe(0);
      expect(output).toMatch(/sdk-dm: ok: dave\.acp\.local answered: \[offline responder\] heard owner\.acp\.local: "Dave, can you hear me\?"/);
      expect(output).toMatch(/sdk-dm: ok: no answer from dave\.acp\.local in 5000 ms/);
      expect(output).toMatch(/"event":"direct\.refused".*"peer":"stranger\.acp\.local","reason":"not-allowed"/);
      // Within a few seconds (the script fails past 5 s), and no model call for the stranger.
      expect(output).toMatch(/PASS: owner\.acp\.local \(official SDK\) DMed dave\.acp\.local and got its answer in the same session, \d+ ms after the send/);
      expect(output).toContain("dave's log: one dispatch for owner.acp.local, none for stranger.acp.local");
      expect(output).toContain("[dm stranger.acp.local] refused: not-allowed (nothing reaches the model)");
      // It leaves nothing behind: no process of its network or its agent (they hold a key's directory).
      expectNothingLeft(output, "sdk-dm.sh");
    },
    300_000,
  );
});
