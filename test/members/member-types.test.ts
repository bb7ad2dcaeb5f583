import { describe, expect, it } from "vitest";
import { MemberDirectory, memberTypeFromServiceEntry, normalizeMemberType, senderTypes } from "../../src/members/member-types.ts";

describe("MemberDirectory precedence", () => {
  it("a sender's own agent.md can say agent, but saying human grants nothing: unknown, with the claim noted", () => {
    const d = new MemberDirectory();
    d.recordProfile("bot.x.io", "agent");
    d.recordProfile("mimic.x.io", "human");
    expect(d.typeOf("bot.x.io")).toEqual({ type: "agent", source: "profile" });
    expect(d.typeOf("mimic.x.io")).toEqual({ type: "unknown", source: "profile", claim: "human" });
    // Looked up once: the claim is remembered, not fetched again.
    expect(d.needsLookup("mimic.x.io")).toBe(false);
    d.recordService("mimic.x.io", "human");
    expect(d.typeOf("mimic.x.io")).toEqual({ type: "human", source: "service" });
  });

  const dir = () => new MemberDirectory({ humans: ["Dana.agentcp.io"], agents: ["bot.agentcp.io"], owner: "carol.agentcp.io" });

  it("config and owner override the service and profiles", () => {
    const d = dir();
    d.recordService("dana.agentcp.io", "agent");
    d.recordProfile("bot.agentcp.io", "human");
    d.recordService("carol.agentcp.io", "agent");
    expect(d.typeOf("DANA.agentcp.io")).toEqual({ type: "human", source: "config" });
    expect(d.typeOf("bot.agentcp.io")).toEqual({ type: "agent", source: "config" });
    expect(d.typeOf("carol.agentcp.io")).toEqual({ type: "human", source: "owner" });
  });

  it("the group service overrides the sender's own agent.md", () => {
    const d = dir();
    d.recordProfile("eve.agentcp.io", "human");
    expect(d.typeOf("eve.agentcp.io")).toEqual({ type: "unknown", source: "profile", claim: "human" });
    d.recordService("eve.agentcp.io", "agent");
    expect(d.typeOf("eve.agentcp.io")).toEqual({ type: "agent", source: "service" });
  });

  it("unknown stays unknown; an unknown report erases only its own source", () => {
    const d = dir();
    expect(d.typeOf("stranger.agentcp.io")).toEqual({ type: "unknown", source: "none" });
    expect(d.needsLookup("stranger.agentcp.io")).toBe(true);
    d.recordProfile("stranger.agentcp.io", "agent");
    d.recordService("stranger.agentcp.io", "human");
    d.recordService("stranger.agentcp.io", "unknown");
    expect(d.typeOf("stranger.agentcp.io")).toEqual({ type: "agent", source: "profile" });
    expect(d.needsLookup("stranger.agentcp.io")).toBe(false);
    expect(d.needsLookup("dana.agentcp.io")).toBe(false);
  });

  it("is bounded: past maxEntries the oldest learnt entry goes", () => {
    const d = new MemberDirectory({ maxEntries: 2 });
    d.recordProfile("a.x.io", "agent");
    d.recordProfile("b.x.io", "agent");
    d.recordProfile("c.x.io", "human");
    expect([d.typeOf("a.x.io"), d.typeOf("b.x.io"), d.typeOf("c.x.io")]).toEqual([
      { type: "unknown", source: "none" },
      { type: "agent", source: "profile" },
      { type: "unknown", source: "profile", claim: "human" },
    ]);
  });
});

describe("MemberDirectory.anyAgent (is this a room where agents contend?)", () => {
  it("true once any member other than us is known as an agent, from config, the service or a profile", () => {
    const self = "alice.acp.local";
    expect(new MemberDirectory({ humans: ["sam"] }).anyAgent(self)).toBe(false);
    expect(new MemberDirectory({ agents: [self] }).anyAgent(self)).toBe(false);
    expect(new MemberDirectory({ agents: ["bot.acp.local"] }).anyAgent(self)).toBe(true);
    const viaService = new MemberDirectory({});
    viaService.recordService("ALICE.acp.local", "agent");
    expect(viaService.anyAgent(self)).toBe(false);
    viaService.recordService("bob.acp.local", "agent");
    expect(viaService.anyAgent(self)).toBe(true);
    const viaProfile = new MemberDirectory({});
    viaProfile.recordProfile("carol.acp.local", "agent");
    expect(viaProfile.anyAgent(self)).toBe(true);
    // Config says human: the service's "agent" does not make a room of it.
    const overridden = new MemberDirectory({ humans: ["dan.acp.local"] });
    overridden.recordService("dan.acp.local", "agent");
    expect(overridden.anyAgent(self)).toBe(false);
  });
});

describe("group service entries", () => {
  it("reads the type from the entry or the agent.md the service attached; counts typed entries", () => {
    expect(memberTypeFromServiceEntry({ agent_id: "a.x.io", type: "agent" })).toEqual({ aid: "a.x.io", type: "agent" });
    expect(memberTypeFromServiceEntry({ aid: "h.x.io", member_type: "Human" })).toEqual({ aid: "h.x.io", type: "human" });
    expect(memberTypeFromServiceEntry({ agent_id: "p.x.io", agent_md: { type: "human" } })).toEqual({ aid: "p.x.io", type: "human" });
    expect(memberTypeFromServiceEntry({ agent_id: "r.x.io", role: "member" })).toEqual({ aid: "r.x.io", type: "unknown" });
    expect(memberTypeFromServiceEntry({ agent_id: "l.x.io", role: "member", human: true })).toEqual({ aid: "l.x.io", type: "human" });
    expect(memberTypeFromServiceEntry({ agent_id: "m.x.io", role: "member", human: false })).toEqual({ aid: "m.x.io", type: "agent" });
    expect(memberTypeFromServiceEntry({ role: "admin" })).toBeUndefined();
    expect(memberTypeFromServiceEntry("a.x.io")).toBeUndefined();
    const d = new MemberDirectory();
    expect(d.recordServiceMembers([{ agent_id: "a.x.io", type: "agent" }, { agent_id: "b.x.io" }, null, { agent_id: "c.x.io", type: "human" }])).toBe(2);
    expect(d.typeOf("c.x.io")).toEqual({ type: "human", source: "service" });
  });

  it("reads type words as the official SDK's UI does: a human word is a person, a framework or any other name an agent, a role or nothing unknown", () => {
    const words: unknown[] = ["human", "USER", "person", "Human User", "agent", "bot", "ai", "robot", "openclaw", "OpenClaw", "langchain", "member", "admin", "unknown", "", 3, null];
    expect(words.map(normalizeMemberType)).toEqual([
      "human",
      "human",
      "human",
      "human",
      "agent",
      "agent",
      "agent",
      "agent",
      "agent",
      "agent",
      "agent",
      "unknown",
      "unknown",
      "unknown",
      "unknown",
      "unknown",
      "unknown",
    ]);
  });

  it("a get_members entry's agent_type (what the SDK's UI reads) comes first; evol's openclaw is an agent", () => {
    expect(memberTypeFromServiceEntry({ agent_id: "a.agentcp.io", agent_type: "openclaw" })).toEqual({ aid: "a.agentcp.io", type: "agent" });
    expect(memberTypeFromServiceEntry({ agent_id: "p.agentcp.io", agent_type: "human", type: "agent" })).toEqual({ aid: "p.agentcp.io", type: "human" });
    expect(memberTypeFromServiceEntry({ agent_id: "r.agentcp.io", role: "member", type: "unknown" })).toEqual({ aid: "r.agentcp.io", type: "unknown" });
  });
});

describe("senderTypes", () => {
  it("lists each other sender once, in first-seen order, with its type", () => {
    const d = new MemberDirectory({ owner: "carol.x.io" });
    d.recordProfile("bob.x.io", "agent");
    const msgs = [{ sender: "bob.x.io" }, { sender: "alice.x.io" }, { sender: "carol.x.io" }, { sender: "BOB.x.io" }, { sender: "zed.x.io" }];
    expect(senderTypes(msgs, "Alice.x.io", d)).toEqual([
      { aid: "bob.x.io", type: "agent", source: "profile" },
      { aid: "carol.x.io", type: "human", source: "owner" },
      { aid: "zed.x.io", type: "unknown", source: "none" },
    ]);
  });
});
