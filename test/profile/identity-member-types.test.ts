import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { createIdentityMemberTypes } from "../../src/profile/identity-member-types.ts";
import type { FetchLike } from "../../src/profile/publish.ts";

describe("createIdentityMemberTypes", () => {
  it("config first, then get_members, then fetched profiles; no fetch → no lookups", async () => {
    const urls: string[] = [];
    // In-process stand-in for the profile host (its http path is tested on a real server elsewhere).
    const fetch: FetchLike = async (url) => {
      urls.push(url);
      return { ok: true, status: 200, text: async () => "---\ntype: agent\n---\n" };
    };
    const mt = createIdentityMemberTypes({ humans: ["h.x.io"], agents: [], owner: "o.x.io", fetch, logger: createMemoryLogger(), now: () => 0 });
    expect(mt.recordServiceMembers([{ agent_id: "s.x.io", type: "human" }, { agent_id: "h.x.io", type: "agent" }])).toBe(2);
    mt.noteSender("s.x.io");
    mt.noteSender("h.x.io");
    mt.noteSender("o.x.io");
    mt.noteSender("p.x.io");
    await new Promise((r) => setImmediate(r));
    expect(urls).toEqual(["https://p.x.io/agent.md"]);
    expect([mt.types.typeOf("h.x.io"), mt.types.typeOf("s.x.io"), mt.types.typeOf("p.x.io"), mt.types.typeOf("o.x.io")]).toEqual([
      { type: "human", source: "config" },
      { type: "human", source: "service" },
      { type: "agent", source: "profile" },
      { type: "human", source: "owner" },
    ]);
    mt.close();

    const offline = createIdentityMemberTypes({ humans: [], agents: ["a.x.io"], logger: createMemoryLogger(), now: () => 0 });
    offline.noteSender("q.x.io");
    expect(offline.types.typeOf("q.x.io").type).toBe("unknown");
    expect(offline.types.typeOf("a.x.io")).toEqual({ type: "agent", source: "config" });
    offline.close();
  });
});
