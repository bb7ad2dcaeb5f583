// A configured identity with no key where we looked: the one error line (printed by the CLI and by
// the OpenClaw gateway's account start) names the state dir it looked in and the whole command
// that fixes it, with the access point and CA the config uses.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { resolveAgentConnection } from "../../src/network/from-config.ts";
import { tempDir } from "./support.ts";

describe("the missing-key hint", () => {
  it("names the state dir and the full `id create` command (with --ap-url and --ca-file when the config has them)", () => {
    const { dir, cleanup } = tempDir();
    try {
      const err = (() => {
        try {
          resolveAgentConnection({ identity: { aid: "dave.acp.local", accessPointUrl: "https://acp3.acp.local:8443" }, network: { caFile: "/etc/acp/ca.crt", insecureTls: false }, stateDir: dir, env: {} });
        } catch (e) {
          return e as Error & { code?: string };
        }
        return undefined;
      })();
      expect(err?.code).toBe("IDENTITY_NOT_FOUND");
      expect(err?.message).toBe(
        `No identity dave.acp.local in ${join(dir, "identities")} (the state dir): create it with ` +
          `\`acp-group id create dave.acp.local --state-dir ${dir} --ap-url https://acp3.acp.local:8443 --ca-file /etc/acp/ca.crt\``,
      );
      expect(() => resolveAgentConnection({ identity: { aid: "erin.agentcp.io" }, network: { insecureTls: false }, stateDir: dir, env: {} })).toThrow(
        `No identity erin.agentcp.io in ${join(dir, "identities")} (the state dir): create it with \`acp-group id create erin.agentcp.io --state-dir ${dir}\``,
      );
    } finally {
      cleanup();
    }
  });
});
