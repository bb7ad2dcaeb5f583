// A real chat: one day of #ubuntu (1,448 lines) replayed from jacob_'s point of view.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { ReplayReport } from "../../src/replay/replay.ts";
import { runCli, type CliRun } from "./helpers.ts";

const LOG = fileURLToPath(new URL("../fixtures/irc-dev/ubuntu-2010-08-17.jsonl", import.meta.url));
// The replay's default simulated model latency; the silent responder sends nothing, so a dispatch
// that called the model runs exactly this long and one that did not ends at once.
const AGENT_LATENCY_MS = 2000;

describe("replay of the #ubuntu log as jacob_", () => {
  let run: CliRun;
  let report: ReplayReport;
  beforeAll(async () => {
    run = await runCli(["replay", LOG, "--persona", "jacob_", "--alias", "jacob", "--json"]);
    report = JSON.parse(run.out || "{}") as ReplayReport;
  });

  it("completes and accounts for every line", () => {
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(report.summary.messages).toBe(1448);
    expect(report.messages).toHaveLength(1448);
    // Exactly once each: in one dispatch or in one drop.
    const seen = new Map<string, number>();
    for (const d of report.dispatches) for (const id of d.messageIds) seen.set(id, (seen.get(id) ?? 0) + 1);
    for (const d of report.drops) seen.set(d.id, (seen.get(d.id) ?? 0) + 1);
    expect(seen.size).toBe(1448);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(report.drops.every((d) => d.reason === "self")).toBe(true);
    expect(report.summary.modelCalls).toBe(report.dispatches.filter((d) => d.outcome.modelCalled).length);
  });

  it("dispatches every mention of jacob within 1 s, unless a dispatch was running", () => {
    const ts = new Map<string, number>();
    for (const raw of readFileSync(LOG, "utf8").split("\n")) {
      if (raw.trim() === "") continue;
      const o = JSON.parse(raw) as { id: string; ts: number };
      ts.set(o.id, o.ts);
    }
    const runs = report.dispatches.map((d) => ({ from: d.at, to: d.at + (d.outcome.modelCalled ? AGENT_LATENCY_MS : 0) }));
    const mentions = report.messages.filter((m) => m.isMention);
    // Plain name matching finds most of the 50 lines addressed to jacob_ (data README): not a vacuous loop.
    expect(mentions.length).toBeGreaterThanOrEqual(30);
    for (const m of mentions) {
      const at = ts.get(m.id)!;
      const carrier = report.dispatches.find((d) => d.messageIds.includes(m.id));
      expect(carrier, `mention ${m.id} is dispatched`).toBeDefined();
      const wait = carrier!.at - at;
      if (wait <= 1000) continue;
      const running = runs.find((r) => r.from <= at && at < r.to);
      expect(running, `mention ${m.id} waited ${wait} ms with no dispatch running`).toBeDefined();
      expect(carrier!.at, `mention ${m.id} goes when the running dispatch ends`).toBeLessThanOrEqual(running!.to + 1000);
    }
  });

  it("keeps model calls in HEATED stretches at or under 15% of their messages", () => {
    const heated = report.dispatches.filter((d) => d.vitality.state === "HEATED");
    const messages = heated.reduce((n, d) => n + d.messageIds.length, 0);
    const calls = heated.filter((d) => d.outcome.modelCalled).length;
    expect(heated.length).toBeGreaterThan(0);
    expect(messages).toBeGreaterThan(100);
    expect(calls / messages).toBeLessThanOrEqual(0.15);
  });

  it("finds who addresses jacob_: against the human annotations, precise mentions and high recall with engagement", () => {
    // Ground truth: `directedTo` of the annotated lines (Kummerfeld et al. 2019). Plain name
    // matching finds 78 % of them (data README); smart keywords plus the `jacob` alias do better,
    // and engaged follow-ups catch most of the rest.
    const flags = new Map(report.messages.map((m) => [m.id, m] as const));
    let addressed = 0;
    let mentionHits = 0;
    let mentionFalse = 0;
    let softHits = 0;
    let softFalse = 0;
    for (const raw of readFileSync(LOG, "utf8").split("\n")) {
      if (raw.trim() === "") continue;
      const o = JSON.parse(raw) as { id: string; sender: string; annotated: boolean; directedTo: string[] };
      if (!o.annotated || o.sender === "jacob_") continue;
      const truth = o.directedTo.includes("jacob_");
      const f = flags.get(o.id)!;
      const soft = f.isMention || f.engaged;
      if (truth) addressed++;
      if (f.isMention) truth ? mentionHits++ : mentionFalse++;
      if (soft) truth ? softHits++ : softFalse++;
    }
    expect(addressed).toBe(50);
    // The report's own measure agrees with this independent count.
    expect(report.addressed?.gold).toBe(50);
    expect(report.addressed?.recall).toBeCloseTo(softHits / addressed, 3);
    expect(report.addressed?.precision).toBeCloseTo(softHits / (softHits + softFalse), 3);
    expect(report.messages.filter((m) => m.directed === true)).toHaveLength(50);
    // Measured: mentions 41 of 50 with 1 false; with engaged 45 of 50 with 11 false.
    expect(mentionHits / addressed).toBeGreaterThanOrEqual(0.8);
    expect(mentionHits / (mentionHits + mentionFalse)).toBeGreaterThanOrEqual(0.95);
    expect(softHits / addressed).toBeGreaterThanOrEqual(0.88);
    expect(softHits / (softHits + softFalse)).toBeGreaterThanOrEqual(0.75);
  });
});
