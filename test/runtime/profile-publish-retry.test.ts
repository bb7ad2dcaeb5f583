// An identity's agent.md is published until it succeeds: a failed upload (a network restarting,
// a server that is full) is tried again with backoff — 2 s, 4 s, … (random() = 0 takes the full
// step) — with the link's current token, and the state says `pending` until then. Closing stops
// it with no timer left. A text that can never be published is not retried. Fake timers; the
// profile host is a scripted FetchLike (the real one is exercised in profiles.test.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryLogger } from "../../src/log.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import type { FetchLike } from "../../src/profile/publish.ts";
import { createIdentityProfile } from "../../src/runtime/profile.ts";

let dir: string;
beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  dir = mkdtempSync(join(tmpdir(), "acp-publish-retry-"));
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

function setup(answers: number[], profile?: Record<string, unknown>) {
  const config = parseChannelConfig({ identities: { alice: { aid: "alice.acp.test", ...(profile ? { profile } : {}) } }, groups: { lobby: {} } });
  const calls: Array<{ at: number; token: string | undefined }> = [];
  const fetch: FetchLike = async (_url, init) => {
    calls.push({ at: Date.now(), token: init.headers.Authorization });
    const status = answers.shift() ?? 200;
    return { ok: status < 300, status, text: async () => "" };
  };
  const logger = createMemoryLogger();
  const profileOf = createIdentityProfile({ config, identityId: "alice", identity: config.identities.alice!, fetch, stateDir: dir, logger, now: Date.now, random: () => 0 });
  return { profile: profileOf, calls, logger };
}

describe("agent.md publish retried until it succeeds", () => {
  it("T+0 503, T+2 s 503, T+6 s 200: published with the token current at each try; pending until then", async () => {
    const { profile, calls, logger } = setup([503, 503, 200]);
    let token = "tok-1";
    expect(profile.publishState).toBe("waiting");
    const done = profile.publishAfterSignIn({ token: () => token }, Promise.resolve());
    await vi.advanceTimersByTimeAsync(0);
    expect(profile.publishState).toBe("pending");
    expect(calls.map((c) => c.at)).toEqual([0]);
    token = "tok-2"; // signed in again meanwhile
    await vi.advanceTimersByTimeAsync(1999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.map((c) => c.at)).toEqual([0, 2000]);
    await vi.advanceTimersByTimeAsync(4000);
    expect(calls.map((c) => c.at)).toEqual([0, 2000, 6000]);
    expect(await done).toMatchObject({ action: "published" });
    expect(profile.publishState).toBe("published");
    expect(calls.map((c) => c.token)).toEqual(["Bearer tok-1", "Bearer tok-2", "Bearer tok-2"]);
    expect(logger.entries.filter((e) => e.event === "profile.publish-retry").map((e) => [e.fields.attempt, e.fields.retryInMs])).toEqual([
      [1, 2000],
      [2, 4000],
    ]);
    expect(vi.getTimerCount()).toBe(0);
    profile.close();
  });

  it("closed while waiting to try again: resolves, no timer left, nothing more sent", async () => {
    const { profile, calls } = setup([500, 500, 500]);
    const done = profile.publishAfterSignIn({ token: () => "tok" }, Promise.resolve());
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(1);
    profile.close();
    expect(await done).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(1);
  });

  it("closed while an upload is in flight (a quick stop while the host writes it): the upload is cut, one debug line, no warning and no retry", async () => {
    const config = parseChannelConfig({ identities: { alice: { aid: "alice.acp.test" } }, groups: { lobby: {} } });
    let sent = 0;
    // A host that answers after 5 s, or fails as fetch does when its signal aborts.
    const fetch: FetchLike = (_url, init) =>
      new Promise((resolve, reject) => {
        sent++;
        const timer = setTimeout(() => resolve({ ok: true, status: 204, text: async () => "" }), 5000);
        init.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR" }));
        });
      });
    const logger = createMemoryLogger();
    const profile = createIdentityProfile({ config, identityId: "alice", identity: config.identities.alice!, fetch, stateDir: dir, logger, now: Date.now, random: () => 0 });
    const done = profile.publishAfterSignIn({ token: () => "tok" }, Promise.resolve());
    await vi.advanceTimersByTimeAsync(1000);
    expect(sent).toBe(1);
    profile.close();
    expect(await done).toBeUndefined();
    // Seen failing before the fix: a warn profile.publish-failed (reason network, ABORT_ERR) on every quick stop.
    expect(logger.entries.filter((e) => e.level === "warn")).toEqual([]);
    expect(logger.entries.filter((e) => e.event === "profile.publish-stopped").map((e) => e.level)).toEqual(["debug"]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a profile file over the size limit is not retried (it never gets smaller by trying)", async () => {
    const { writeFileSync } = await import("node:fs");
    const file = join(dir, "big.md");
    writeFileSync(file, `---\naid: alice.acp.test\nname: alice\ntype: agent\n---\n${"x".repeat(5000)}\n`);
    const { profile, calls } = setup([], { file });
    const result = await profile.publishAfterSignIn({ token: () => "tok" }, Promise.resolve());
    expect(result).toMatchObject({ action: "skipped" });
    expect(calls).toHaveLength(0);
    expect(profile.publishState).toBe("off");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never signed in: nothing sent, nothing pending", async () => {
    const { profile, calls } = setup([]);
    expect(await profile.publishAfterSignIn({ token: () => "tok" }, Promise.reject(new Error("refused")))).toBeUndefined();
    expect(calls).toHaveLength(0);
    expect(profile.publishState).toBe("off");
  });
});
