// `acp-group leave` in process against the local network (real sockets): the identity leaves with
// the group service's leave_group, the group hears `member_left` (as the official SDK's event),
// the config turns the group off for that identity (run leaves it out), leaving twice says so,
// and `join` by the link brings it back — in the group and in the config.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { joinCommand } from "../../src/cli/join.ts";
import { leaveCommand } from "../../src/cli/leave.ts";
import { listGroupsForIdentity, loadConfigFile } from "../../src/config/load.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { createGroupConnection, type GroupEvent } from "../../src/transport/connection.ts";
import { tempDir, waitFor } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});

const ERIN = "erin.acp.local";
const BOB = "bob.acp.local";

describe("acp-group leave", () => {
  it("leaves by leave_group: the group hears member_left, the config turns the group off for the identity; twice says so; join brings it back", async () => {
    const d = tempDir("cli-leave");
    dirs.push(d);
    const dev = await startDevNetwork({ stateDir: d.dir, groups: { lobby: { members: { [BOB]: {}, [ERIN]: {} } } }, rateLimit: null });
    try {
      // Bob listens for the group's events.
      const bob = dev.connect(await dev.identity(BOB));
      const events: GroupEvent[] = [];
      const conn = createGroupConnection({ channel: bob.channel(dev.service.aid), aid: BOB, groups: ["lobby"], getCursor: () => 0, onMessages: () => {}, onEvent: (_g, e) => void events.push(e) });
      await conn.start();

      await dev.identity(ERIN);
      const config = join(d.dir, "erin.json");
      writeFileSync(config, JSON.stringify({ stateDir: join(d.dir, "local-network"), identities: { erin: { aid: ERIN, accessPointUrl: dev.net.localUrl } }, groups: { lobby: { cooldownMs: 1000 } } }));
      expect(listGroupsForIdentity(loadConfigFile(config), loadConfigFile(config).identities.erin!)).toEqual(["lobby"]);
      const out: string[] = [];
      const io = { out: (s: string) => void out.push(s), err: (s: string) => void out.push(s) };

      expect(await leaveCommand(["lobby", "--identity", "erin", "--config", config], io)).toBe(0);
      expect(out).toEqual([`${ERIN} → lobby on group.acp.local: left`, `updated ${config}: lobby off for erin (\`join\` turns it on again)`]);
      expect(dev.service.members("lobby")).toEqual([BOB]);
      await waitFor(() => events.some((e) => e.event === "member_left"), "bob hears member_left");
      expect(events.find((e) => e.event === "member_left")).toMatchObject({ event: "member_left", actor: ERIN, target: ERIN, data: { agent_id: ERIN, reason: "left" } });
      // The file: lobby is off for erin (its settings kept), so run leaves it out.
      const written = JSON.parse(readFileSync(config, "utf8")) as { identities: { erin: { groups: unknown } }; groups: unknown };
      expect(written.identities.erin.groups).toEqual({ lobby: { enabled: false } });
      expect(written.groups).toEqual({ lobby: { cooldownMs: 1000 } });
      expect(listGroupsForIdentity(loadConfigFile(config), loadConfigFile(config).identities.erin!)).toEqual([]);

      out.length = 0;
      expect(await leaveCommand(["lobby", "--identity", "erin", "--config", config], io)).toBe(0);
      expect(out).toEqual([`${ERIN} → lobby on group.acp.local: not a member (nothing to leave)`, `${config} does not run lobby for erin: unchanged`]);

      // Back in by the group's link: a member again, and on again in the config.
      out.length = 0;
      expect(await joinCommand([dev.service.joinLink("lobby"), "--identity", "erin", "--config", config], io)).toBe(0);
      expect(out[0]).toBe(`${ERIN} → lobby on group.acp.local: joined`);
      expect(out[1]).toContain("group lobby on again for erin");
      expect(dev.service.members("lobby")).toEqual([BOB, ERIN]);
      expect(listGroupsForIdentity(loadConfigFile(config), loadConfigFile(config).identities.erin!)).toEqual(["lobby"]);
      await waitFor(() => events.filter((e) => e.event === "member_joined").length === 1, "bob hears erin join again");
      await conn.close();
      await bob.close();
    } finally {
      await dev.close();
    }
  }, 30_000);

  it("names what is wrong: no group, no identity", async () => {
    const out: string[] = [];
    const io = { out: (s: string) => void out.push(s), err: (s: string) => void out.push(s) };
    await expect(leaveCommand(["--identity", "erin"], io)).rejects.toThrow("expected one group id");
    await expect(leaveCommand(["lobby"], io)).rejects.toThrow("expected `--identity AID`");
  });
});
