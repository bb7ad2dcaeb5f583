import { describe, expect, it } from "vitest";
import { MemberDirectory } from "../../src/members/member-types.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { ProfileLookup } from "../../src/profile/member-profile-lookup.ts";
import type { FetchLike } from "../../src/profile/publish.ts";

// A counting in-process fetch: the http path itself is covered on a real server in stranger-types.e2e.test.ts.
function profiles(map: Record<string, string>) {
  const urls: string[] = [];
  const fetch: FetchLike = async (url) => {
    urls.push(url);
    const host = new URL(url).host;
    const text = map[host];
    return text === undefined ? { ok: false, status: 404, text: async () => "" } : { ok: true, status: 200, text: async () => text };
  };
  return { fetch, urls };
}

describe("ProfileLookup", () => {
  it("fetches an unknown sender once, retries a missing profile only after retryAfterMs, never for configured senders", async () => {
    let now = 0;
    const { fetch, urls } = profiles({ "a.x.io": "---\ntype: agent\n---\n" });
    const directory = new MemberDirectory({ humans: ["h.x.io"] });
    const lookup = new ProfileLookup({ directory, fetch, logger: createMemoryLogger(), now: () => now, retryAfterMs: 1000 });
    await lookup.lookup("a.x.io");
    await lookup.lookup("A.x.io");
    await lookup.lookup("h.x.io");
    await lookup.lookup("none.x.io");
    now = 999;
    await lookup.lookup("none.x.io");
    now = 1000;
    await lookup.lookup("none.x.io");
    expect(urls).toEqual(["https://a.x.io/agent.md", "https://none.x.io/agent.md", "https://none.x.io/agent.md"]);
    expect(directory.typeOf("a.x.io")).toEqual({ type: "agent", source: "profile" });
  });

  it("ignores a profile that names another aid, and anything after close", async () => {
    // `type: agent`: a profile's "human" is never taken anyway, so only these checks can keep them unknown.
    const { fetch } = profiles({ "liar.x.io": "---\naid: someone.x.io\ntype: agent\n---\n", "late.x.io": "---\ntype: agent\n---\n" });
    const directory = new MemberDirectory();
    const lookup = new ProfileLookup({ directory, fetch, logger: createMemoryLogger(), now: () => 0 });
    await lookup.lookup("liar.x.io");
    const late = lookup.lookup("late.x.io");
    lookup.close();
    await late;
    expect(directory.typeOf("liar.x.io").type).toBe("unknown");
    expect(directory.typeOf("late.x.io").type).toBe("unknown");
  });

  it("joins a fetch in flight and caps concurrent fetches", async () => {
    const pending: Array<() => void> = [];
    const urls: string[] = [];
    const fetch: FetchLike = (url) =>
      new Promise((resolve) => {
        urls.push(url);
        pending.push(() => resolve({ ok: true, status: 200, text: async () => "---\ntype: agent\n---\n" }));
      });
    const lookup = new ProfileLookup({ directory: new MemberDirectory(), fetch, logger: createMemoryLogger(), now: () => 0, maxInFlight: 2 });
    const a = lookup.lookup("a.x.io");
    expect(lookup.lookup("a.x.io")).toBe(a);
    lookup.noteSender("b.x.io");
    lookup.noteSender("c.x.io");
    expect(urls).toEqual(["https://a.x.io/agent.md", "https://b.x.io/agent.md"]);
    for (const p of pending) p();
    await a;
  });
});
