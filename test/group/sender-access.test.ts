import { describe, expect, it } from "vitest";
import { compileSenderAccess } from "../../src/group/sender-access.ts";

describe("compileSenderAccess", () => {
  it("no lists: null (every sender may address the agent, nothing is checked)", () => {
    expect(compileSenderAccess({ allowFrom: [], denyFrom: [], owner: "carol.agentcp.io" })).toBeNull();
  });

  it("denyFrom by aid and by pattern, case-insensitive; the owner is never refused", () => {
    const check = compileSenderAccess({ denyFrom: ["Mallory.agentcp.io", "*.spam.example"], owner: "Carol.spam.example" })!;
    expect(check("mallory.AGENTCP.io")).toEqual({ ok: false, reason: "denied" });
    expect(check("x.spam.example")).toEqual({ ok: false, reason: "denied" });
    expect(check("carol.spam.example")).toEqual({ ok: true });
    expect(check("bob.agentcp.io")).toEqual({ ok: true });
  });

  it("allowFrom admits only matches (and the owner); denyFrom wins over allowFrom", () => {
    const check = compileSenderAccess({ allowFrom: ["*.team.example"], denyFrom: ["intern.team.example"], owner: "carol.agentcp.io" })!;
    expect(check("bob.team.example")).toEqual({ ok: true });
    expect(check("intern.team.example")).toEqual({ ok: false, reason: "denied" });
    expect(check("mallory.agentcp.io")).toEqual({ ok: false, reason: "not-allowed" });
    expect(check("carol.agentcp.io")).toEqual({ ok: true });
  });

  it("pattern characters other than * are literal (a dot is a dot)", () => {
    const check = compileSenderAccess({ allowFrom: ["bob.agentcp.io"] })!;
    expect(check("bobxagentcp.io")).toEqual({ ok: false, reason: "not-allowed" });
    const star = compileSenderAccess({ allowFrom: ["a+b*"] })!;
    expect(star("a+bc")).toEqual({ ok: true });
    expect(star("aab")).toEqual({ ok: false, reason: "not-allowed" });
  });
});
