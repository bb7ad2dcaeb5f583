import { describe, expect, it } from "vitest";
import { parseBotCommand } from "../../src/group/command.ts";

describe("parseBotCommand", () => {
  it.each([
    ["!sound | puff", { name: "sound", target: "puff" }],
    ["!repeat > rowan_", { name: "repeat", target: "rowan_" }],
    ["  !Grub |Frantic ", { name: "grub", target: "Frantic" }],
    ["!wow", { name: "wow", target: null }],
    ["!info compizconfig-settings-manager", { name: "info", target: null }],
  ])("%j → %j", (line, expected) => {
    expect(parseBotCommand(line)).toEqual(expected);
  });

  it.each(["hello !sound", "! sound", "!!", "!1st", "wow!", ""])("%j is no command", (line) => {
    expect(parseBotCommand(line)).toBeNull();
  });
});
