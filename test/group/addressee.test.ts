import { describe, expect, it } from "vitest";
import { classifyLeadingAddress, leadingName, nickKey } from "../../src/group/addressee.ts";

describe("nickKey", () => {
  it("folds case and drops a leading @ and trailing _ - ` |", () => {
    expect(nickKey("Jacob_")).toBe("jacob");
    expect(nickKey("yashi-")).toBe("yashi");
    expect(nickKey("guest__")).toBe("guest");
    expect(nickKey("@Bob")).toBe("bob");
    expect(nickKey("bob.agentcp.io")).toBe("bob.agentcp.io");
  });
});

describe("leadingName", () => {
  it.each([
    ["bob: try this", { name: "bob", marked: true }],
    ["bob, try this", { name: "bob", marked: true }],
    ["@bob try this", { name: "bob", marked: true }],
    ["  jacob_: did it work?", { name: "jacob_", marked: true }],
    ["bob try this", { name: "bob", marked: false }],
    ["bob.agentcp.io: ping", { name: "bob.agentcp.io", marked: true }],
    ["bob.", { name: "bob", marked: false }],
    ["小明：你看一下", { name: "小明", marked: true }],
    ["小明，你看一下", { name: "小明", marked: true }],
  ])("%j → %j", (text, expected) => {
    expect(leadingName(text)).toEqual(expected);
  });

  it.each(["", "  ", "http://example.com is down", "!wow", "a: single letter", "? what"])("%j opens with no name", (text) => {
    expect(leadingName(text)).toBeNull();
  });
});

describe("classifyLeadingAddress", () => {
  const self = new Set(["jacob"]);
  const members = new Set(["bob", "yashi", "guest"]);
  const isMember = (k: string) => members.has(k);

  it("a marked address to a variant of our name is to us; a bare variant is not", () => {
    expect(classifyLeadingAddress("jacob: did it work?", self, isMember)).toEqual({ to: "us", name: "jacob" });
    expect(classifyLeadingAddress("@Jacob did it work?", self, isMember)).toEqual({ to: "us", name: "Jacob" });
    expect(classifyLeadingAddress("jacob is a name", self, isMember)).toEqual({ to: "none" });
  });

  it("an address to another known member is to them, marked or bare (IRC style)", () => {
    expect(classifyLeadingAddress("bob: no", self, isMember)).toEqual({ to: "other", name: "bob" });
    expect(classifyLeadingAddress("bob, no", self, isMember)).toEqual({ to: "other", name: "bob" });
    expect(classifyLeadingAddress("@bob no", self, isMember)).toEqual({ to: "other", name: "bob" });
    expect(classifyLeadingAddress("yashi- working is questionable", self, isMember)).toEqual({ to: "other", name: "yashi-" });
    expect(classifyLeadingAddress("guest__ jimbo no", self, isMember)).toEqual({ to: "other", name: "guest__" });
  });

  it("a name that belongs to nobody here addresses nobody", () => {
    expect(classifyLeadingAddress("note: backups run at 3", self, isMember)).toEqual({ to: "none" });
    expect(classifyLeadingAddress("well, maybe", self, isMember)).toEqual({ to: "none" });
    expect(classifyLeadingAddress("ok thanks", self, isMember)).toEqual({ to: "none" });
  });
});
