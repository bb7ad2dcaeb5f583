// A group on another access point: the runtime opens its own channel to `group.<that-ap>` beside
// the one to the identity's own access point, and each group is fed by its own service. Loopback
// network (two group services), real time with bounded waits.
import { describe, expect, it } from "vitest";
import { parseChannelConfig } from "../../src/config/load.ts";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createGroupService } from "../../src/server/group-service.ts";
import { createLoopback } from "../support/loopback.ts";
import { GENEROUS_BUDGET, HUMAN, startRecorded, useRuntimeFixture, waitFor } from "../support/runtime-harness.ts";

const fx = useRuntimeFixture("access-points");
const ALICE = "alice.acp.local";
const FAST = { bufferGateMs: 30, bufferGateMaxWaitMs: 200, cooldownMs: 0, delay: { enabled: false }, budget: GENEROUS_BUDGET };

describe("startIdentity with groups on two access points", () => {
  it("one channel per group service; sends, pulls and list_my_groups go to the group's own service", async () => {
    const home = createGroupService({ domain: "acp.local", groups: { lobby: { members: { [ALICE]: {}, [HUMAN]: { human: true } } } }, rateLimit: null });
    const far = createGroupService({ domain: "other.test", groups: { far: { members: { [ALICE]: {}, "zoe.other.test": { human: true } } } }, rateLimit: null });
    far.post({ groupId: "far", sender: "zoe.other.test", content: "waiting for you" });
    const net = createLoopback([home, far]);
    const config = parseChannelConfig({
      stateDir: fx.stateDir(),
      humans: [HUMAN, "zoe.other.test"],
      identities: { alice: { aid: ALICE, name: "Alice" } },
      groups: { lobby: FAST, far: { ...FAST, accessPoint: "other.test" } },
    });
    const link = net.link(ALICE);
    const alice = fx.track(startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "mention", replyText: "On it." }), link }));
    await alice.ready;
    expect([...alice.connections.keys()].sort()).toEqual(["group.acp.local", "group.other.test"]);
    expect(alice.connectionFor("far")!.peer).toBe("group.other.test");
    expect(alice.connection!.peer).toBe("group.acp.local");
    expect([...link.channels.keys()].sort()).toEqual(["group.acp.local", "group.other.test"]);
    // The backlog of the far group came from the far service.
    await waitFor(() => alice.groupClient("far")!.stats().received === 1, "far backlog");
    home.post({ groupId: "lobby", sender: HUMAN, content: "Alice, ping" });
    far.post({ groupId: "far", sender: "zoe.other.test", content: "Alice, over here" });
    await waitFor(() => home.history("lobby").length === 2 && far.history("far").length === 3, "both replies");
    expect(home.history("lobby").map((m) => m.sender)).toEqual([HUMAN, ALICE]);
    expect(far.history("far").map((m) => m.sender)).toEqual(["zoe.other.test", "zoe.other.test", ALICE]);
    await alice.sendText("far", "host-initiated");
    expect(far.history("far").at(-1)).toMatchObject({ sender: ALICE, content: "host-initiated" });
    expect(home.onlineAids()).toEqual([ALICE]);
    expect(far.onlineAids()).toEqual([ALICE]);
  });

  it("at start, list_my_groups is logged per service and a configured group the identity is not in is warned about", async () => {
    const home = createGroupService({ domain: "acp.local", groups: { lobby: { members: { [ALICE]: {} } }, closed: { members: {} } }, rateLimit: null });
    const net = createLoopback([home]);
    const logger = createMemoryLogger();
    const config = parseChannelConfig({ stateDir: fx.stateDir(), identities: { alice: { aid: ALICE } }, groups: { lobby: FAST, closed: FAST } });
    const alice = fx.track(startRecorded({ config, identityId: "alice", backend: createScriptedBackend({ mode: "silent" }), link: net.link(ALICE), logger }));
    await alice.ready;
    expect(logger.entries.find((e) => e.event === "runtime.my-groups")?.fields).toMatchObject({ service: "group.acp.local", groups: ["lobby"] });
    expect(logger.entries.find((e) => e.event === "runtime.not-a-member")).toMatchObject({ level: "warn", fields: { groups: ["closed"] } });
  });
});
