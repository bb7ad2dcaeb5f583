// How `run` and `start` start many identities (src/cli/live-session.ts): never in the turn that
// asked (the config read and the garbage collection it leaves due end first), then in slices of
// at most START_SLICE_MS of the session's clock, one turn of the event loop between slices. The
// identities here are stand-ins that only advance the clock by what a start costs.
import { afterEach, describe, expect, it } from "vitest";
import { openLiveSession, START_SLICE_MS, type LiveSession } from "../../src/cli/live-session.ts";
import type { RunningIdentity, StartIdentityParams } from "../../src/runtime/identity.ts";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

let session: LiveSession | undefined;
afterEach(() => session?.release());

/** A session whose every start costs `costMs` on its clock; `started` lists them with the clock's time. */
function sessionWith(costMs: number) {
  let now = 0;
  const started: string[] = [];
  session = openLiveSession({
    io: { out: () => {}, err: () => {} },
    afterStop: async () => {},
    onStopFailed: () => {},
    now: () => now,
    startOne: (p: StartIdentityParams) => {
      started.push(`T+${now} ${p.identityId}`);
      now += costMs;
      return { identityId: p.identityId, done: Promise.resolve() } as unknown as RunningIdentity;
    },
  });
  return { session, started };
}

describe("startIdentities", () => {
  it("starts none in the turn that asked, then a slice of at most 20 ms per turn", async () => {
    expect(START_SLICE_MS).toBe(20);
    const { session, started } = sessionWith(8);
    const all = session.startIdentities(["a", "b", "c", "d", "e", "f", "g"], () => ({}) as Omit<StartIdentityParams, "identityId" | "abortSignal">);
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toEqual([]);
    await nextTurn();
    // a, b, c: 24 ms of the clock, the slice is over.
    expect(started).toEqual(["T+0 a", "T+8 b", "T+16 c"]);
    await nextTurn();
    expect(started).toEqual(["T+0 a", "T+8 b", "T+16 c", "T+24 d", "T+32 e", "T+40 f"]);
    await all;
    expect(started).toEqual(["T+0 a", "T+8 b", "T+16 c", "T+24 d", "T+32 e", "T+40 f", "T+48 g"]);
    expect(session.running.map((r) => r.identityId)).toEqual(["a", "b", "c", "d", "e", "f", "g"]);
  });

  it("no identity starts once stopping began, even between turns; nothing to start takes no turn", async () => {
    const { session, started } = sessionWith(15);
    const all = session.startIdentities(["a", "b", "c", "d"], () => ({}) as Omit<StartIdentityParams, "identityId" | "abortSignal">);
    await nextTurn();
    expect(started).toEqual(["T+0 a", "T+15 b"]);
    void session.stop("test");
    await all;
    expect(started).toEqual(["T+0 a", "T+15 b"]);
    let resolved = false;
    void session.startIdentities([], () => ({}) as Omit<StartIdentityParams, "identityId" | "abortSignal">).then(() => (resolved = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(resolved).toBe(true);
  });
});
