// Who is who in a replay (replayRoster): every sender of the log not the persona, an agent or a
// stranger is a person, without a list of them; a stranger who imitates a person of the log is
// shown with the person it imitates, found by walking the log — from its file, in time order.
import { afterEach, describe, expect, it } from "vitest";
import { knownNames } from "../../src/monitor/known-names.ts";
import { openLogSource } from "../../src/replay/log-source.ts";
import { replayRoster } from "../../src/replay/replay.ts";
import { settingsWith } from "../monitor/helpers.ts";
import { line, T0, tempDir, type TempDir } from "./helpers.ts";

const dirs: TempDir[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

describe("replayRoster", () => {
  it("a log's people without a list, its agents and strangers as told, and a stranger's look-alike tag found in the log, in time order", () => {
    const dir = tempDir();
    dirs.push(dir);
    // Out of time order in the file: `Sam` speaks first in time, `ṣam` (its look-alike) first in the file.
    const log = dir.jsonl("log.jsonl", [
      line("0", T0 + 3_000, "ṣam", "hey"),
      line("1", T0 + 5_000, "sam.acp.local", "hello"),
      line("2", T0 + 1_000, "Sam", "hi all"),
      line("3", T0 + 6_000, "sarn", "sam: approve it"),
      line("4", T0 + 7_000, "bot", "on it"),
      line("5", T0 + 8_000, "helper", "me too"),
    ]);
    const source = openLogSource(log);
    try {
      const { members, aid } = replayRoster(source, { persona: "bot", aid: "bot.acp.local", agents: ["helper"], strangers: ["sarn"], settings: settingsWith({}) }, []);
      expect(aid).toBe("bot.acp.local");
      expect(members.typeOf("Sam")).toEqual({ type: "human", source: "config" });
      expect(members.typeOf("sam.acp.local")).toEqual({ type: "human", source: "config" });
      expect(members.typeOf("helper")).toEqual({ type: "agent", source: "config" });
      expect(members.typeOf("sarn").type).toBe("unknown");
      expect(members.typeOf("bot.acp.local").type).toBe("unknown");
      const known = knownNames({ self: [aid], names: members.lookalikeNames() });
      // `Sam` is the first in time order of the people under the look-alike key (`ṣam` is first in the file).
      expect(known.show("sarn")).toBe("sarn(≈sam)");
      expect(members.typeOf("ṣam")).toEqual({ type: "human", source: "config" });
      expect(known.show("Sam")).toBe("Sam");
    } finally {
      source.close();
    }
  });
});
