// Closing an identity's profile while its agent.md upload is being answered: the upload's state
// write (profile.json, off the main thread) is awaited by close, so nothing lands in the state
// folder after close resolved — a stop followed by removing the folder (a throwaway `--fresh`
// run, a test) finds nothing written afterwards. Real files and real timers: the state write is
// the real one; the profile host is a scripted FetchLike (no host can exist here for agent.md).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryLogger } from "../../src/log.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import type { FetchLike } from "../../src/profile/publish.ts";
import { profileStateFile } from "../../src/profile/profile-sync.ts";
import { createIdentityProfile, type IdentityProfile } from "../../src/runtime/profile.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-profile-close-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("closing a profile whose upload was just answered", () => {
  it("close resolves once the answered upload is recorded on disk: nothing is written after", async () => {
    const config = parseChannelConfig({ identities: { alice: { aid: "alice.acp.test" } }, groups: { lobby: {} } });
    let profile: IdentityProfile | undefined;
    let closed: Promise<void> | void = undefined;
    let closeCalled!: () => void;
    const closeWasCalled = new Promise<void>((resolve) => (closeCalled = resolve));
    // The host accepts the upload; the identity is stopped in the same turn the answer arrives,
    // before the state write that follows it.
    const fetch: FetchLike = async () => {
      queueMicrotask(() => {
        closed = profile!.close();
        closeCalled();
      });
      return { ok: true, status: 204, text: async () => "" };
    };
    profile = createIdentityProfile({ config, identityId: "alice", identity: config.identities.alice!, fetch, stateDir: dir, logger: createMemoryLogger(), now: Date.now });
    const done = profile.publishAfterSignIn({ token: () => "tok" }, Promise.resolve());
    await closeWasCalled;
    await closed;
    // Seen failing before the fix: close returned at once, the write still running (no file yet).
    expect(existsSync(profileStateFile(dir, "alice"))).toBe(true);
    const state = JSON.parse(readFileSync(profileStateFile(dir, "alice"), "utf8")) as { aid: string };
    expect(state.aid).toBe("alice.acp.test");
    await done;
  });

  it("close with no publish ever started resolves at once and writes nothing", async () => {
    const config = parseChannelConfig({ identities: { alice: { aid: "alice.acp.test" } }, groups: { lobby: {} } });
    const profile = createIdentityProfile({ config, identityId: "alice", identity: config.identities.alice!, fetch: async () => ({ ok: true, status: 204, text: async () => "" }), stateDir: dir, logger: createMemoryLogger(), now: Date.now });
    await profile.close();
    expect(existsSync(profileStateFile(dir, "alice"))).toBe(false);
  });
});
