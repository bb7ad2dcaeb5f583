import { describe, expect, it } from "vitest";
import { isDirectedAt, measureAddressed } from "../../src/replay/addressed.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { parseLog } from "../../src/replay/log.ts";

const line = (id: string, ts: number, sender: string, directedTo?: string[]): LogLine => ({
  id, ts, sender, content: "x", line: 1, ...(directedTo ? { directedTo } : {}),
});

describe("isDirectedAt", () => {
  it("is null without an annotation, else whether the persona is named (case-insensitive)", () => {
    expect(isDirectedAt(line("1", 0, "a"), "jacob_")).toBeNull();
    expect(isDirectedAt(line("1", 0, "a", []), "jacob_")).toBe(false);
    expect(isDirectedAt(line("1", 0, "a", ["Jacob_"]), "jacob_")).toBe(true);
    expect(isDirectedAt(line("1", 0, "a", ["jacob"]), "jacob_")).toBe(false);
  });

  it("reads directedTo only where the log says the line is annotated", () => {
    const { lines } = parseLog(
      [
        JSON.stringify({ id: "a", ts: 1, sender: "x", content: "hi", annotated: false, directedTo: ["p"] }),
        JSON.stringify({ id: "b", ts: 2, sender: "x", content: "hi", annotated: true, directedTo: ["p"] }),
        JSON.stringify({ id: "c", ts: 3, sender: "x", content: "hi", directedTo: [] }),
      ].join("\n"),
    );
    expect(lines.map((l) => l.directedTo)).toEqual([undefined, ["p"], []]);
  });
});

describe("measureAddressed", () => {
  const isPersona = (s: string) => s === "p";
  it("is null when no line is annotated", () => {
    expect(measureAddressed({ lines: [line("1", 0, "a")], isPersona, persona: "p", flags: new Map(), modelCallAt: new Map() })).toBeNull();
  });

  it("counts gold, reach, waits and flag precision/recall over annotated lines only", () => {
    const lines = [
      line("1", 1000, "a", ["p"]), // gold, flagged, reached after 0 ms
      line("2", 2000, "b", ["p"]), // gold, not flagged, reached after 3000 ms
      line("3", 3000, "c", ["p"]), // gold, flagged, never reached
      line("4", 4000, "d", []), //    not gold, flagged (a false hit)
      line("5", 5000, "e"), //        not annotated, flagged: ignored
      line("6", 6000, "p", ["a"]), // the persona's own line: ignored
    ];
    const flags = new Map([
      ["1", { isMention: true, engaged: false }],
      ["3", { isMention: false, engaged: true }],
      ["4", { isMention: true, engaged: false }],
      ["5", { isMention: true, engaged: false }],
    ]);
    const modelCallAt = new Map([
      ["1", 1000],
      ["2", 5000],
      ["4", 4000],
    ]);
    expect(measureAddressed({ lines, isPersona, persona: "p", flags, modelCallAt })).toEqual({
      gold: 3,
      reached: 2,
      reachRate: 0.667,
      waitP50Ms: 0,
      waitP95Ms: 3000,
      precision: 0.667,
      recall: 0.667,
    });
  });
});
