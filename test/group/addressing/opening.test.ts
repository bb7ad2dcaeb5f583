// What follows a line's first word: where the named-other rule looks for a second-word address.
import { describe, expect, it } from "vitest";
import { afterFirstWord, opensWithStrongAddress } from "../../../src/group/addressing/opening.ts";

describe("afterFirstWord", () => {
  it.each([
    ["lol bob, try xkill", "bob, try xkill"],
    ["thanks bob", "bob"],
    ["  heh   jacob_ missing a space", "jacob_ missing a space"],
    ["ok,\tbob: again", "bob: again"],
    ["好的\u3000小明，再试一次", "小明，再试一次"],
    ["sorry ArnetzT.. don't know", "ArnetzT.. don't know"],
  ])("%j → %j", (content, rest) => {
    expect(afterFirstWord(content)).toBe(rest);
  });

  it.each(["bob", "  bob  ", "", "   "])("one word or none: %j → null", (content) => {
    expect(afterFirstWord(content)).toBeNull();
  });
});

describe("opensWithStrongAddress", () => {
  it.each([
    ["cooldude: its on normal", true],
    ["@dave see above", true],
    ["小明：再试一次", true],
    ["yes, its mostly about the design", false],
    ["well, maybe", false],
    ["http://example.org: look", false],
    ["debian 12", false],
  ])("%j → %s", (content, strong) => {
    expect(opensWithStrongAddress(content)).toBe(strong);
  });
});
