// Does the replay report read right? The bundled #ubuntu day as `npm run docs` renders it for docs/cli.md (persona
// jacob_, --responder mention), at DOM level: the budget lane says which allowance it draws and on
// what scale, budget skips of unaddressed talk are not drawn as an alarm, each meaning has one
// colour, every mark drawn is in the legend, and the headline waits say which lines they cover.
// The browser test checks the same page's colours as Chromium computes them.
import { parse as parseHtml, type HTMLElement } from "node-html-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { percentile } from "../../src/replay/addressed.ts";
import { chartStyle } from "../../src/report/html-text.ts";
import { renderHtmlReport } from "../../src/report/html.ts";
import type { ReplayReport } from "../../src/replay/replay.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { fixtureLines, replayFor } from "./helpers.ts";

let lines: LogLine[];
let report: ReplayReport;
let doc: HTMLElement;

beforeAll(async () => {
  lines = fixtureLines();
  report = await replayFor(lines);
  doc = parseHtml(renderHtmlReport({ report, lines, persona: "jacob_", aid: undefined, source: "ubuntu.jsonl" }));
}, 60_000);

/** The value of a CSS custom property in the page's style. */
const cssVar = (name: string) => new RegExp(`${name}:\\s*([^;]+);`).exec(chartStyle)?.[1]?.trim();
/** The declarations of the first rule whose selector list contains `selector` exactly. */
function rule(selector: string): string {
  for (const m of chartStyle.matchAll(/([^{}]+)\{([^}]*)\}/g)) {
    if (m[1]!.split(",").map((s) => s.trim()).includes(selector)) return m[2]!;
  }
  return "";
}
const stat = (label: string) => doc.querySelectorAll("#summary .stat").find((s) => s.querySelector("span")?.text === label)?.querySelector("b")?.text;

describe("the budget lane says which allowance it shows and its scale", () => {
  it("one line per allowance (unaddressed: normal dispatches; addressed: mentions and engaged), scaled 0–100 % of it", () => {
    const labels = doc.querySelectorAll("#labels text").map((t) => t.text);
    expect(labels).toContain("budget, % of allowance");
    // Its scale beside it: 100% at the top of the lane, 0% at the bottom.
    expect(labels.slice(labels.indexOf("budget, % of allowance") - 1, labels.indexOf("budget, % of allowance") + 2)).toEqual(["100%", "budget, % of allowance", "0%"]);
    const points = (cls: string) => doc.querySelector(`#chart .budget polyline.${cls}`)?.getAttribute("points")?.split(" ").length ?? 0;
    expect(points("unaddressed")).toBe(report.dispatches.filter((d) => d.trigger === "normal").length);
    expect(points("addressed")).toBe(report.dispatches.filter((d) => d.trigger !== "normal").length);
    expect(points("addressed")).toBeGreaterThan(0);
  });

  it("an over-budget skip of unaddressed talk is a neutral tick; a mention or engaged line refused for budget is the alarm", () => {
    const over = (pool: "addressed" | "unaddressed") =>
      report.dispatches.filter((d) => d.outcome.skipReason === "over-budget" && (d.trigger === "normal") === (pool === "unaddressed")).length;
    const ticks = (cls: string) => doc.querySelector(`#chart .budget path.${cls}`)?.getAttribute("d")?.match(/M/g)?.length ?? 0;
    expect(over("unaddressed")).toBeGreaterThan(100);
    expect(ticks("over-unaddressed")).toBe(over("unaddressed"));
    expect(ticks("over-addressed")).toBe(over("addressed"));
    // Neither the allowance's top line nor the unaddressed ticks use the alarm colour.
    expect(rule(".budget .full")).not.toMatch(/var\(--alarm\)|#d62728/);
    expect(rule(".budget .over-unaddressed")).not.toMatch(/var\(--alarm\)|#d62728/);
    expect(rule(".budget .over-addressed")).toMatch(/var\(--alarm\)/);
  });
});

describe("colours and legend", () => {
  it("one colour per meaning: a mention, a missed addressed line, a sent reply and the budget lines differ", () => {
    const colours = ["--mention", "--engaged", "--normal", "--own", "--plain", "--reached", "--missed", "--reply", "--alarm", "--budget-unaddressed", "--budget-addressed"].map(cssVar);
    expect(colours.every((c) => c !== undefined)).toBe(true);
    // Alarm is the colour of a missed addressed line; every other meaning has its own.
    expect(cssVar("--alarm")).toBe(cssVar("--missed"));
    const meanings = colours.filter((_, i) => i !== 8);
    expect(new Set(meanings).size).toBe(meanings.length);
  });

  it("every mark drawn on the chart is explained by a legend item", () => {
    const items = doc.querySelectorAll("#legend [data-mark]");
    expect(items.length).toBeGreaterThan(10);
    const explained = new Set<HTMLElement>();
    for (const item of items) for (const el of doc.querySelectorAll(item.getAttribute("data-mark")!.split(",").map((s) => `#chart ${s.trim()}`).join(", "))) explained.add(el);
    const marks = doc.querySelectorAll("#chart g:not(.axis):not(.rows):not(#highlight) > *").filter((el) => !el.classList.contains("frame"));
    expect(marks.length).toBeGreaterThan(100);
    const unexplained = marks.filter((el) => !explained.has(el)).map((el) => `${el.tagName.toLowerCase()}.${el.getAttribute("class")}`);
    expect([...new Set(unexplained)]).toEqual([]);
  });
});

describe("the headline waits say which lines they cover", () => {
  it("unaddressed lines and mentions each get their own p95 / max", () => {
    // Each line's wait: from its timestamp to the first dispatch that carried it.
    const at = new Map<string, number>();
    for (const d of report.dispatches) for (const id of d.messageIds) if (!at.has(id)) at.set(id, d.at);
    const waits = { mention: [] as number[], unaddressed: [] as number[] };
    lines.forEach((l, i) => {
      const t = at.get(l.id);
      const m = report.messages[i]!;
      if (t === undefined) return;
      if (m.isMention) waits.mention.push(t - l.ts);
      else if (!m.engaged) waits.unaddressed.push(t - l.ts);
    });
    const show = (w: number[]) => {
      w.sort((a, b) => a - b);
      return `${(percentile(w, 95) / 1000).toFixed(1)} s / ${((w.at(-1) ?? 0) / 1000).toFixed(1)} s`;
    };
    expect(waits.mention.length).toBeGreaterThan(10);
    expect(stat("wait p95 / max · unaddressed lines")).toBe(show(waits.unaddressed));
    expect(stat("wait p95 / max · mentions")).toBe(show(waits.mention));
    expect(stat("wait p95 / max")).toBeUndefined();
  });
});
