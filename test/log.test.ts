// Logs that hold under attack: floods of one warning are summarised with counts, a failure is one
// line with its cause, stacks appear only at debug, and a budget ratio is never logged past 1.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createJsonLogger, errorFields, guardLogger } from "../src/log.ts";
import { decisionLogFields } from "../src/monitor/decision.ts";
import { DEFAULT_GROUP_SETTINGS } from "../src/config/load.ts";
import { initGroupClientForIdentity } from "../src/group/group-client.ts";
import { createGroupMonitor } from "../src/monitor/monitor.ts";
import { parseChannelConfig, resolveGroupSettings } from "../src/config/load.ts";

beforeEach(() => vi.useFakeTimers({ now: 1_767_600_000_000 }));
afterEach(() => vi.useRealTimers());

const parse = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe("guardLogger", () => {
  it("5,000 garbage-frame warnings: 10 lines, then one summary with the count at the window's end", async () => {
    const lines: string[] = [];
    const log = createJsonLogger({ write: (l) => lines.push(l) });
    for (let i = 0; i < 5000; i++) log.log("warn", "transport.frame-dropped", { reason: "malformed" });
    expect(lines).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(parse(lines).slice(10)).toEqual([
      expect.objectContaining({ level: "warn", event: "log.suppressed", of: "transport.frame-dropped", suppressed: 4990, windowMs: 60_000 }),
    ]);
    // The next window starts fresh.
    log.log("warn", "transport.frame-dropped", { reason: "malformed" });
    expect(lines).toHaveLength(12);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("different events are limited separately, and info/debug lines are never limited", () => {
    const out: string[] = [];
    const log = guardLogger({ log: (_l, e) => out.push(e) }, { burst: 2 });
    for (let i = 0; i < 5; i++) {
      log.log("warn", "a");
      log.log("error", "b");
      log.log("info", "c");
    }
    expect(out.filter((e) => e === "a")).toHaveLength(2);
    expect(out.filter((e) => e === "b")).toHaveLength(2);
    expect(out.filter((e) => e === "c")).toHaveLength(5);
  });

  it("stacks only at debug; the cause is always there", () => {
    const err = new Error("model call failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) });
    const info: string[] = [];
    const debug: string[] = [];
    createJsonLogger({ write: (l) => info.push(l) }).log("warn", "x", errorFields(err));
    createJsonLogger({ level: "debug", write: (l) => debug.push(l) }).log("warn", "x", errorFields(err));
    expect(parse(info)[0]).toEqual(expect.objectContaining({ error: "model call failed", cause: "connect ECONNREFUSED 127.0.0.1:9" }));
    expect(parse(info)[0]).not.toHaveProperty("stack");
    expect(parse(debug)[0]).toHaveProperty("stack");
  });
});

describe("a budget ratio in the log", () => {
  it("is clamped to [0, 1]", () => {
    const base = {
      identityId: "a", groupId: "g", dispatchId: 1, attempt: 0, trigger: "normal" as const, at: 0, messageIds: ["1"],
      vitality: { state: "ACTIVE" as const, messagesIn5m: 1, uniqueSpeakersIn5m: 1, myMessagesIn5m: 0, updatedAt: 0 },
      mentionInfo: { mentioned: false, mentionCount: 0, batchesMerged: 1, triggerType: "normal" as const },
      replyType: null, budgetPool: "unaddressed" as const, addressing: [], modelCalls: 0, tokens: 0, delayMs: 0, agentChain: 0, outcome: { kind: "skipped" as const, reason: "silent" as const },
    };
    expect(decisionLogFields({ ...base, budgetRatio: 7.5 }).budgetRatio).toBe(1);
    expect(decisionLogFields({ ...base, budgetRatio: Number.NaN }).budgetRatio).toBe(1);
    expect(decisionLogFields({ ...base, budgetRatio: -0.2 }).budgetRatio).toBe(0);
  });
});

describe("an unreachable model", () => {
  it("writes one warn line per attempt, with the cause and no stack (model stubbed: no hosted LLM here)", async () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ write: (l) => lines.push(l) });
    const config = parseChannelConfig({ identities: { alice: { aid: "alice.agentcp.io" } }, groups: { g1: { delay: { enabled: false }, maxRetries: 2, retryBackoffMs: 1000 } } });
    const identity = config.identities.alice!;
    const settings = resolveGroupSettings(config, identity, "g1");
    const monitor = createGroupMonitor({
      identityId: "alice", identity, groupId: "g1", settings, humans: [], logger,
      backend: {
        name: "unreachable",
        generate: async () => {
          throw Object.assign(new Error("model call failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) }), { code: "LLM_NETWORK", retryable: true });
        },
      },
      sender: { sendMessage: async () => ({ msgId: "9", timestamp: 1 }) },
    });
    const client = initGroupClientForIdentity({ identityId: "alice", groupId: "g1", identity, settings: { ...DEFAULT_GROUP_SETTINGS, ...settings }, dispatch: monitor.handle, logger });
    client.feedBufferGate([{ msgId: "1", groupId: "g1", sender: "bob.agentcp.io", content: "alice?", contentType: "text", timestamp: 1_767_600_000_000, metadata: null }]);
    await vi.advanceTimersByTimeAsync(10_000);
    const loud = parse(lines).filter((l) => l.level === "warn" || l.level === "error");
    // Attempts 0, 1 and 2 fail: two retries, then the drop.
    expect(loud.map((l) => l.event)).toEqual(["group.dispatch-failed", "group.dispatch-failed", "group.dispatch-retries-exhausted"]);
    for (const l of loud) {
      expect(l).toMatchObject({ error: "model call failed", code: "LLM_NETWORK", cause: "connect ECONNREFUSED" });
      expect(l).not.toHaveProperty("stack");
    }
    monitor.close();
    await client.close();
  });
});
