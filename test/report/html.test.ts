// The replay report page at DOM level (always runs, no browser): its structure, the data it
// carries, and that no log text can break out of it. The browser test renders it for real.
import { readFileSync } from "node:fs";
import { parse as parseHtml, type HTMLElement } from "node-html-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { escapeHtml, jsonForScript } from "../../src/report/html-text.ts";
import { renderHtmlReport } from "../../src/report/html.ts";
import { FLAG } from "../../src/report/page-data.ts";
import { runReplay, type ReplayReport } from "../../src/replay/replay.ts";
import { DEFAULT_GROUP_SETTINGS } from "../../src/config/load.ts";
import type { LogLine } from "../../src/replay/log.ts";
import { runCli, tempDir } from "../replay/helpers.ts";
import { bigLog, EVIL, FIXTURE, fixtureLines, replayFor } from "./helpers.ts";

let lines: LogLine[];
let report: ReplayReport;
let html: string;
let doc: HTMLElement;

beforeAll(async () => {
  lines = bigLog(20_000);
  report = await replayFor(lines);
  html = renderHtmlReport({ report, lines, persona: "jacob_", source: "big.jsonl" });
  doc = parseHtml(html, { parseNoneClosedTags: false });
}, 60_000);

describe("renderHtmlReport on a 20,000-line log", () => {
  it("is one self-contained page of a few MB: no external resource, network forbidden by its CSP", () => {
    expect(lines).toHaveLength(20_000);
    expect(html.length).toBeLessThan(6_000_000);
    expect(doc.querySelectorAll("[src], link, iframe, img, object, embed")).toHaveLength(0);
    // Log lines carry URLs as text; outside the data block there is no address but the SVG namespace.
    const outsideData = html.replace(/<script type="application\/json" id="report-data">[^]*?<\/script>/, "");
    expect(outsideData).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    const csp = doc.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute("content") ?? "";
    expect(csp).toMatch(/^default-src 'none'; .*script-src 'sha256-[A-Za-z0-9+/=]+'$/);
  });

  it("draws every dispatch as a marker coloured by trigger, and every sent reply", () => {
    const markers = doc.querySelectorAll("#chart circle.d");
    expect(markers).toHaveLength(report.dispatches.length);
    expect(report.dispatches.length).toBeGreaterThan(100);
    for (const trigger of ["mention", "normal"] as const) {
      expect(markers.filter((m) => m.classList.contains(trigger)).length).toBe(report.dispatches.filter((d) => d.trigger === trigger).length);
    }
    expect(markers.filter((m) => m.classList.contains("called")).length).toBe(report.dispatches.filter((d) => d.outcome.modelCalled).length);
    expect(doc.querySelectorAll("#chart rect.reply")).toHaveLength(report.summary.sent);
    expect(report.summary.sent).toBeGreaterThan(0);
    expect(markers.map((m) => Number(m.getAttribute("data-d")))).toEqual(report.dispatches.map((_, i) => i));
  });

  it("has the vitality band, budget line, waits, addressed lane, message rows, summary and hour table", () => {
    const states = new Set(doc.querySelectorAll(".vitality rect").map((r) => r.getAttribute("class")));
    expect([...states].every((s) => /^v-(DORMANT|COOLING|ACTIVE|HEATED)$/.test(s ?? ""))).toBe(true);
    expect(states.size).toBeGreaterThan(1);
    // One line per allowance: every dispatch is a point on the line of the allowance it drew on.
    const budgetPoints = doc.querySelectorAll(".budget polyline").map((l) => l.getAttribute("points")!.split(" ").length);
    expect(budgetPoints).toHaveLength(2);
    expect(budgetPoints[0]! + budgetPoints[1]!).toBe(report.dispatches.length);
    expect(doc.querySelector(".waits path")?.getAttribute("d")).toMatch(/^M[\d.]+ [\d.]+H/);
    expect(doc.querySelector(".addressed .reached")?.getAttribute("d")).toMatch(/^M/);
    expect(doc.querySelector(".addressed .missed")?.getAttribute("d")).toMatch(/^M/);
    // Every message is one dot in some row path.
    const dots = doc.querySelectorAll(".messages path").reduce((n, p) => n + (p.getAttribute("d")!.match(/M/g)?.length ?? 0), 0);
    expect(dots).toBe(20_000);
    expect(doc.querySelectorAll("#labels text").map((t) => t.text)).toContain("jacob_ (persona)");
    expect(doc.querySelector("#reasons")?.text).toContain("model called");
    expect(doc.querySelectorAll("#hours tbody tr").length).toBeGreaterThan(3);
    expect(doc.querySelector("#detail")).not.toBeNull();
  });

  it("carries the decisions and message texts the page shows on hover, exactly", () => {
    const data = JSON.parse(doc.querySelector("#report-data")!.textContent) as {
      msgs: { text: string[]; s: string[]; f: number[] };
      ds: Array<{ trigger: string; ids: number[]; skipReason: string | null; text: string | null; sent: boolean }>;
    };
    expect(data.msgs.text).toEqual(lines.map((l) => l.content));
    expect(data.msgs.s).toEqual(lines.map((l) => l.sender));
    expect(data.ds.map((d) => [d.trigger, d.skipReason, d.sent])).toEqual(report.dispatches.map((d) => [d.trigger, d.outcome.skipReason, d.outcome.sent]));
    const first = report.dispatches[0]!;
    expect(data.ds[0]!.ids.map((i) => lines[i]!.id)).toEqual(first.messageIds);
    const gold = report.messages.filter((m) => m.directed).length;
    expect(data.msgs.f.filter((f) => f & FLAG.gold).length).toBe(gold);
  });
});

describe("log text cannot break out of the page", () => {
  it("a line `</script><script>alert(1)</script>` stays data: two scripts only, the text round-trips", () => {
    expect(doc.querySelectorAll("script")).toHaveLength(2);
    expect(html.split(EVIL).length).toBe(1);
    const data = JSON.parse(doc.querySelector("#report-data")!.textContent) as { msgs: { text: string[]; s: string[] }; ds: Array<{ text: string | null }> };
    expect(data.msgs.text).toContain(`jacob: ${EVIL}`);
    expect(data.msgs.s).toContain(EVIL);
    expect(data.ds.some((d) => d.text === `sure ${EVIL}`)).toBe(true);
  });

  it("a sender label is escaped text", () => {
    const label = escapeHtml(EVIL);
    expect(label).toBe("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(jsonForScript({ t: "a</b>&\u2028" })).toBe('{"t":"a\\u003c/b\\u003e\\u0026\\u2028"}');
    expect(JSON.parse(jsonForScript({ t: "a</b>&\u2028" }))).toEqual({ t: "a</b>&\u2028" });
  });
});

describe("a small log", () => {
  it("with no dispatch and no annotation: no markers, no addressed lane, still a page", async () => {
    const few: LogLine[] = [
      { id: "a", ts: 1_767_600_000_000, sender: "jacob_", content: "hello", line: 1 },
      { id: "b", ts: 1_767_600_001_000, sender: "jacob_", content: "anyone?", line: 2 },
    ];
    const small = await replayFor(few);
    expect(small.dispatches).toHaveLength(0);
    const page = parseHtml(renderHtmlReport({ report: small, lines: few, persona: "jacob_", source: "few.jsonl" }));
    expect(page.querySelectorAll("#chart circle.d")).toHaveLength(0);
    expect(page.querySelector(".addressed")).toBeNull();
    expect(page.querySelector(".budget polyline")).toBeNull();
    expect(page.querySelectorAll("#labels text").map((t) => t.text)).toContain("jacob_ (persona)");
    expect(JSON.parse(page.querySelector("#report-data")!.textContent).msgs.text).toEqual(["hello", "anyone?"]);
  });
});

describe("acp-group replay --html FILE", () => {
  it("writes the page and names it after the text report", async () => {
    const dir = tempDir();
    try {
      const out = `${dir.path}/report.html`;
      const run = await runCli(["replay", FIXTURE, "--persona", "jacob_", "--alias", "jacob", "--html", out]);
      expect(run.code).toBe(0);
      expect(run.out.split("\n").at(-1)).toBe(`report: ${out}`);
      const page = parseHtml(readFileSync(out, "utf8"));
      expect(page.querySelector("title")?.text).toBe(`replay of ${FIXTURE} as jacob_`);
      expect(page.querySelectorAll("#chart circle.d").length).toBeGreaterThan(100);
    } finally {
      dir.remove();
    }
  });
});

describe("the persona's own lines", () => {
  it("are the persona's name or its --aid, as the replay counts them", async () => {
    const base = fixtureLines().map((l) => ({ ...l, sender: l.sender === "jacob_" ? "jacob.agentcp.io" : l.sender }));
    const r = await runReplay(base, { persona: "jacob_", aid: "jacob.agentcp.io", aliases: ["jacob"], settings: DEFAULT_GROUP_SETTINGS, responder: "mention" });
    const page = parseHtml(renderHtmlReport({ report: r, lines: base, persona: "jacob_", aid: "jacob.agentcp.io", source: "aid.jsonl" }));
    const data = JSON.parse(page.querySelector("#report-data")!.textContent) as { msgs: { f: number[] } };
    const own = base.flatMap((l, i) => (l.sender === "jacob.agentcp.io" ? [i] : []));
    expect(own.length).toBeGreaterThan(0);
    expect(data.msgs.f.flatMap((f, i) => (f & FLAG.own ? [i] : []))).toEqual(own);
  });
});
