// `acp-group replay` of a flood: one member mentions the agent every 10 s for five minutes. With
// the config's owner and group lists, the replay shows who paid for the model calls, the flood
// held to its share (skip `sender-over-share`), a denied sender dropped, and the owner answered.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { line, runCli, T0, tempDir, type TempDir } from "./helpers.ts";
import type { ReplayReport } from "../../src/replay/replay.ts";

let dir: TempDir;
beforeAll(() => {
  dir = tempDir();
});
afterAll(() => dir.remove());

const FLOOD = [
  ...Array.from({ length: 30 }, (_, i) => line(`f${i + 1}`, T0 + i * 10_000, "mallory", `alice, do task ${i + 1} now`)),
  line("s1", T0 + 150_000, "spammer", "alice, buy my thing"),
  line("b1", T0 + 292_000, "bob", "alice, when is the standup?"),
  line("o1", T0 + 296_000, "carol", "alice, summarise please"),
];

describe("replay: who may spend the agent", () => {
  it("the flood gets 10 model calls of 15 in 5 min, the denied sender none, bob and the owner are answered", async () => {
    const cfg = dir.json("share-config.json", {
      identities: { a: { aid: "alice.agentcp.io", name: "alice", owner: "carol" } },
      // An addressed allowance of 15 calls per 5 min: the flood's share is 10 of them.
      groups: { "*": { denyFrom: ["spam*"], budget: { addressed: { "5m": { messages: 15, tokens: 180_000 } } } } },
    });
    const log = dir.jsonl("flood.jsonl", FLOOD);
    const run = await runCli(["replay", log, "--persona", "alice", "--json", "--responder", "mention", "--config", cfg]);
    expect(run.err).toBe("");
    const report = JSON.parse(run.out) as ReplayReport;

    const called = (id: string) => report.dispatches.find((d) => d.messageIds.includes(id))?.outcome;
    // T+0 … T+90s: mallory's first ten mentions reach the model; T+100s … T+290s: silence, no model call.
    for (let i = 1; i <= 10; i++) expect(called(`f${i}`)?.modelCalled, `f${i}`).toBe(true);
    for (let i = 11; i <= 30; i++) expect(called(`f${i}`), `f${i}`).toMatchObject({ modelCalled: false, skipReason: "sender-over-share" });
    expect(report.summary.skipped["sender-over-share"]).toBe(20);
    // T+150s: the denied sender is dropped on arrival and never dispatched.
    expect(report.drops).toContainEqual({ id: "s1", reason: "refused-sender" });
    expect(called("s1")).toBeUndefined();
    // T+292s bob, T+296s the owner: both reach the model.
    expect(called("b1")?.modelCalled).toBe(true);
    expect(called("o1")?.modelCalled).toBe(true);
    expect(report.payers).toEqual([
      { sender: "mallory", dispatches: 10 },
      { sender: "bob", dispatches: 1 },
      { sender: "carol", dispatches: 1 },
    ]);

    // The text report says the same in two lines.
    const text = await runCli(["replay", log, "--persona", "alice", "--responder", "mention", "--config", cfg]);
    expect(text.out).toContain("sender-over-share=20");
    expect(text.out).toContain("paid by: mallory=10, bob=1, carol=1");
  });
});
