// Conformance as a user meets it, with the official ACP TypeScript SDK as the witness (the kit in
// ../shared/conformance beside the clone, as in CI): scripts/conformance/sdk-witness.sh runs every
// part as its own process from the command line — `acp-group server --tls`; an identity the SDK
// creates in its own layout under its default empty seed password; `acp-group import-evol` (one
// command), `join`, `run`; a member on the SDK that asks in the lobby and must be answered; the
// SDK's own group event handler, joined to the lobby, which must see a person join through
// `acp-group chat`. In a plain clone without the kit this test is skipped and says so in capitals
// on stderr and in its title: nothing was checked.
import { describe, expect, it } from "vitest";
import { expectNothingLeft, kitPresent, NOT_CHECKED, runConformanceScript } from "./kit.ts";

const present = kitPresent(
  ["build.sh", "dns-shim.mjs", "sdk-dm.mjs", "sdk-member.mjs", "sdk-events.mjs"],
  ["scripts/conformance/sdk-witness.sh was NOT run: no SDK-made identity imported, no SDK member", "answered, no SDK event handler checked."],
);

describe("the official SDK as witness of the user's path (../shared/conformance)", () => {
  it.skipIf(!present)(
    present
      ? "an SDK-made identity is imported in one command, joined, run and answers an SDK member; the SDK's event handler sees a person join through `acp-group chat`"
      : NOT_CHECKED,
    () => {
      const { status, stdout, output } = runConformanceScript("sdk-witness.sh");
      expect(status, output).toBe(0);
      const lines = stdout.split("\n");
      expect(lines.some((l) => /^sdk-witness: 2\. identity dave\.acp\.local created in .* \(seed password empty, the SDK default\)/.test(l)), output).toBe(true);
      expect(lines.some((l) => l.startsWith("sdk-witness: 3. acp-group import-evol: imported dave.acp.local from ")), output).toBe(true);
      expect(lines, output).toContain("sdk-witness:    acp-group run: agents online: dave (dave.acp.local) in lobby");
      expect(output).toMatch(/sdk-witness: 5\. ok: dave\.acp\.local answered in lobby: .*"Dave, are you there\?"/);
      expect(output).toMatch(/sdk-witness: {4}ok: saw dana\d+\.acp\.local join: member_joined via /);
      expect(lines.at(-2)).toMatch(/^sdk-witness: PASS: /);
      // Nothing it started outlives it: no process names its work dir (the server and `run` once did).
      expectNothingLeft(output, "sdk-witness");
    },
    300_000,
  );
});
