// A model turn cannot hang an identity: each call's slot times out, and close() releases every
// slot even when a back-end ignores its abort signal. The model is a stub (no hosted LLM here)
// that never settles.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createModelCallLimiter, ModelCallError } from "../../src/monitor/model-calls.ts";
import type { AgentBackend, GenerateRequest } from "../../src/types.ts";

/** A back-end that never answers and never looks at its signal (a hung OpenClaw turn). */
function hungBackend(): AgentBackend & { calls: GenerateRequest[] } {
  const calls: GenerateRequest[] = [];
  return { name: "hung", calls, generate: (r) => (calls.push(r), new Promise(() => {})) };
}

function request(groupId: string, mentioned = false, signal?: AbortSignal): GenerateRequest {
  return {
    identityId: "alice", groupId, dispatchId: 1, trigger: mentioned ? "mention" : "normal", systemPrompt: "s", stablePrefix: "s", body: "b",
    messages: [], mentionInfo: { mentioned, mentionCount: mentioned ? 1 : 0, batchesMerged: 1, triggerType: mentioned ? "mention" : "normal" },
    replyType: "short", maxChars: 100, ...(signal ? { signal } : {}),
  };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("model-call slots", () => {
  it("T+0 g1's call hangs, g2 waits for the one slot; T+30s g1 times out (retryable) and g2 starts", async () => {
    const backend = hungBackend();
    const limiter = createModelCallLimiter({ backend, concurrency: 1, timeoutMs: 30_000 });
    const first = limiter.backend.generate(request("g1")).catch((e: unknown) => e);
    void limiter.backend.generate(request("g2")).catch(() => {});
    await vi.advanceTimersByTimeAsync(0);
    expect(backend.calls.map((c) => c.groupId)).toEqual(["g1"]);

    await vi.advanceTimersByTimeAsync(29_999);
    expect(backend.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    const err = await first;
    expect(err).toBeInstanceOf(ModelCallError);
    expect(err).toMatchObject({ code: "MODEL_TIMEOUT", retryable: true, groupId: "g1" });
    expect(backend.calls.map((c) => c.groupId)).toEqual(["g1", "g2"]);
    // The back-end was told to stop, whether or not it listens.
    expect(backend.calls[0]!.signal?.aborted).toBe(true);
    limiter.close();
  });

  it("close() settles running and waiting calls at once, though the back-end ignores the abort", async () => {
    const backend = hungBackend();
    const limiter = createModelCallLimiter({ backend, concurrency: 1, timeoutMs: 180_000 });
    const running = limiter.backend.generate(request("g1")).catch((e: unknown) => e);
    const waiting = limiter.backend.generate(request("g2", true)).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(0);
    limiter.close();
    await expect(running).resolves.toMatchObject({ code: "MODEL_ABORTED", retryable: false });
    await expect(waiting).resolves.toBeDefined();
    await expect(limiter.backend.generate(request("g3"))).rejects.toMatchObject({ code: "MODEL_ABORTED" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a group's own abort (its monitor closing) ends its call without waiting for the timeout", async () => {
    const limiter = createModelCallLimiter({ backend: hungBackend(), concurrency: 2, timeoutMs: 180_000 });
    const ac = new AbortController();
    const call = limiter.backend.generate(request("g1", false, ac.signal)).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    ac.abort();
    await expect(call).resolves.toMatchObject({ code: "MODEL_ABORTED" });
    expect(limiter.running).toBe(0);
    limiter.close();
  });

  it("an answer before the timeout passes through and clears its timer", async () => {
    const backend: AgentBackend = { name: "quick", generate: async () => ({ text: "hi" }) };
    const limiter = createModelCallLimiter({ backend, concurrency: 1, timeoutMs: 5000 });
    await expect(limiter.backend.generate(request("g1"))).resolves.toEqual({ text: "hi" });
    expect(vi.getTimerCount()).toBe(0);
    limiter.close();
  });
});
