// Who the group service pushes to, on the server clock it is given: registrations lapse after the
// TTL (pruned on read, no timer), heartbeats keep them, and each aid holds a bounded number.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { MAX_ONLINE_SESSIONS_PER_AID, OnlineRegistry } from "../../src/server/online-registry.ts";

function registry() {
  let t = 1_000_000;
  const online = new OnlineRegistry({ now: () => t, ttlMs: 300_000, logger: createMemoryLogger() });
  return { online, advance: (ms: number) => (t += ms) };
}

describe("OnlineRegistry", () => {
  it("T+0 register → T+4m heartbeat → T+8m still online → T+13m1s lapsed", () => {
    const { online, advance } = registry();
    expect(online.handle("bob.acp.local", "s1", "register_online").code).toBe(0);
    advance(240_000);
    online.handle("bob.acp.local", "s1", "heartbeat");
    advance(240_000);
    expect(online.liveSessions("bob.acp.local")).toEqual(["s1"]);
    advance(301_000);
    expect(online.liveSessions("bob.acp.local")).toEqual([]);
    expect(online.aids()).toEqual([]);
  });

  it("a heartbeat never registers, and none revives a lapsed registration", () => {
    const { online, advance } = registry();
    online.handle("bob.acp.local", "s1", "heartbeat");
    expect(online.liveSessions("bob.acp.local")).toEqual([]);
    online.handle("bob.acp.local", "s1", "register_online");
    advance(300_001);
    online.handle("bob.acp.local", "s1", "heartbeat");
    expect(online.liveSessions("bob.acp.local")).toEqual([]);
  });

  it("keeps at most MAX_ONLINE_SESSIONS_PER_AID sessions per aid, replacing the least recently seen", () => {
    const { online, advance } = registry();
    for (let i = 0; i <= MAX_ONLINE_SESSIONS_PER_AID; i++) {
      online.handle("bob.acp.local", `s${i}`, "register_online");
      advance(1000);
    }
    const live = online.liveSessions("bob.acp.local");
    expect(live).toHaveLength(MAX_ONLINE_SESSIONS_PER_AID);
    expect(live).not.toContain("s0");
  });

  it("unregister, a lost push and a session's end each remove the session", () => {
    const { online } = registry();
    for (const s of ["s1", "s2", "s3"]) online.handle("bob.acp.local", s, "register_online");
    online.handle("bob.acp.local", "s1", "unregister_online");
    online.drop("bob.acp.local", "s2");
    expect(online.liveSessions("bob.acp.local")).toEqual(["s3"]);
    online.endSession("bob.acp.local", "s3");
    expect(online.aids()).toEqual([]);
  });
});
