import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIBackend } from "../../src/backends/standalone.ts";
import { isSilentReply, joinUserTurns } from "../../src/backends/chat-request.ts";
import { LlmError } from "../../src/backends/llm-error.ts";
import { resolveLlmSettings } from "../../src/backends/llm-settings.ts";
import { createConversationRegistry } from "../../src/backends/conversation-registry.ts";
import { createFileStateStore } from "../../src/state/file-store.ts";
import { llmSchema, type LlmSettings } from "../../src/config/schema.ts";
import { createMemoryLogger } from "../../src/log.ts";
import type { GenerateRequest, InboundMessage, TriggerType } from "../../src/types.ts";
import { MOCK_DEFAULT_TEXT, startOpenAIMock, type OpenAIMock } from "../support/openai-mock.ts";

const PREFIX = "You are alice.agentcp.io, an agent on the ACP network.\nRules: be brief.";
const NO_ENV: NodeJS.ProcessEnv = {};

function msg(id: number, sender: string, content: string): InboundMessage {
  return {
    msgId: String(id),
    groupId: "g1",
    sender,
    content,
    contentType: "text/plain",
    timestamp: 1_700_000_000_000 + id * 1000,
    metadata: null,
    isMention: false,
    engaged: false,
  };
}

function request(dispatchId: number, body: string, over: Partial<GenerateRequest> = {}): GenerateRequest {
  const trigger: TriggerType = over.trigger ?? "normal";
  const situation = `## Situation\nvitality: ACTIVE\ndispatch: ${dispatchId}`;
  return {
    identityId: "alice.agentcp.io",
    groupId: "g1",
    dispatchId,
    trigger,
    systemPrompt: `${PREFIX}\n\n${situation}`,
    stablePrefix: PREFIX,
    body,
    messages: [msg(dispatchId * 10, "bob.agentcp.io", body), msg(dispatchId * 10 + 1, "carol.agentcp.io", "+1")],
    mentionInfo: { mentioned: trigger === "mention", mentionCount: 0, batchesMerged: 1, triggerType: trigger },
    replyType: "short",
    maxChars: 500,
    ...over,
  };
}

async function rejection(p: Promise<unknown>): Promise<LlmError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(LlmError);
    return err as LlmError;
  }
  throw new Error("expected the call to fail");
}

describe("resolveLlmSettings", () => {
  const base = llmSchema.parse({});
  it("prefers config over OPENAI_* env vars, falls back to them, and defaults the model", () => {
    const env = { OPENAI_BASE_URL: "http://env.example/v1", OPENAI_API_KEY: "sk-env", OPENAI_MODEL: "env-model" };
    expect(resolveLlmSettings({ ...base, baseUrl: "http://cfg.example/v1", apiKey: "sk-cfg", model: "cfg-model" }, env)).toMatchObject({
      baseUrl: "http://cfg.example/v1",
      apiKey: "sk-cfg",
      model: "cfg-model",
      configured: true,
      sources: { baseUrl: "config", apiKey: "config", model: "config" },
    });
    expect(resolveLlmSettings(base, env)).toMatchObject({
      baseUrl: "http://env.example/v1",
      apiKey: "sk-env",
      model: "env-model",
      configured: true,
      sources: { baseUrl: "env", apiKey: "env", model: "env" },
    });
    const none = resolveLlmSettings(base, { OPENAI_API_KEY: "  ", OPENAI_MODEL: "" });
    expect(none).toMatchObject({ model: "gpt-4o-mini", configured: false, sources: { baseUrl: "none", apiKey: "none", model: "default" } });
    expect("apiKey" in none).toBe(false);
    // A local endpoint without a key counts as configured.
    expect(resolveLlmSettings(base, { OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" }).configured).toBe(true);
    expect(resolveLlmSettings(base, NO_ENV)).toMatchObject({ timeoutMs: 60000, maxRetries: 2, maxTokens: 400, stream: false, historyTokenLimit: 8000 });
  });

  it("refuses to build a back-end with nothing to talk to", () => {
    let caught: unknown;
    try {
      createOpenAIBackend({ llm: base, env: NO_ENV });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(LlmError);
    expect(caught).toMatchObject({ code: "LLM_NOT_CONFIGURED", retryable: false });
  });

  it("treats empty text and the NO_REPLY token as silence", () => {
    expect(isSilentReply("  ")).toBe(true);
    expect(isSilentReply("NO_REPLY")).toBe(true);
    expect(isSilentReply("NO_REPLY_THANKS is a word")).toBe(false);
    expect(isSilentReply("hi")).toBe(false);
    // The same rule as the monitor's intent gate, so history and group agree on what was said.
    expect(isSilentReply("NO_REPLY.")).toBe(true);
    expect(isSilentReply("**NO_REPLY**")).toBe(true);
    expect(isSilentReply("\u200B")).toBe(true);
    expect(isSilentReply("Good idea.\n\nNO_REPLY")).toBe(false);
  });
});

describe("createOpenAIBackend against a local OpenAI-compatible mock server (real openai SDK)", () => {
  let mock: OpenAIMock;
  let stateDir: string;
  beforeAll(async () => {
    mock = await startOpenAIMock();
  });
  afterAll(async () => {
    await mock.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    stateDir = mkdtempSync(join(tmpdir(), "acp-standalone-"));
  });
  afterEach(() => {
    rmSync(stateDir, { recursive: true, force: true });
  });

  const llm = (over: Partial<LlmSettings> = {}): LlmSettings => ({
    ...llmSchema.parse({ baseUrl: mock.baseUrl, apiKey: "sk-test", model: "mock-model" }),
    ...over,
  });

  it("non-streaming: sends system prefix + situation/body, returns text and usage with cached tokens", async () => {
    const backend = createOpenAIBackend({ llm: llm({ temperature: 0.3 }), env: NO_ENV });
    mock.enqueue({ text: "hello bob", usage: { prompt_tokens: 120, completion_tokens: 4, cached_tokens: 96 } });

    const result = await backend.generate(request(1, "[msg_id:10] bob.agentcp.io: hi alice"));

    expect(result).toEqual({ text: "hello bob", usage: { promptTokens: 120, completionTokens: 4, cachedTokens: 96 } });
    const [req] = mock.chatRequests();
    expect(req?.headers.authorization).toBe("Bearer sk-test");
    expect(req?.body).toMatchObject({ model: "mock-model", max_tokens: 400, temperature: 0.3 });
    expect(req?.body.stream).toBeFalsy();
    expect(req?.body.messages).toEqual([
      { role: "system", content: PREFIX },
      { role: "user", content: "## Situation\nvitality: ACTIVE\ndispatch: 1\n\n[msg_id:10] bob.agentcp.io: hi alice" },
    ]);
    expect(backend.stats()).toEqual({ calls: 1, promptTokens: 120, completionTokens: 4, cachedTokens: 96, errors: 0 });
  });

  it("streaming: assembles the chunks and asks for usage via stream_options.include_usage", async () => {
    const backend = createOpenAIBackend({ llm: llm({ stream: true }), env: NO_ENV });
    mock.enqueue({ text: "streamed 你好 reply, in pieces", chunkSize: 3, usage: { prompt_tokens: 50, completion_tokens: 9, cached_tokens: 32 } });

    const result = await backend.generate(request(1, "hi"));

    expect(result).toEqual({ text: "streamed 你好 reply, in pieces", usage: { promptTokens: 50, completionTokens: 9, cachedTokens: 32 } });
    expect(mock.chatRequests()[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(backend.stats().cachedTokens).toBe(32);
  });

  // Changed: a silent turn used to be left out, which sent two user turns in a row (some
  // servers reject that); it is now stored as the bare token.
  it("stores a reply with a tacked-on NO_REPLY without the token, and a decorated NO_REPLY as the bare token", async () => {
    const backend = createOpenAIBackend({ llm: llm(), env: NO_ENV });
    mock.enqueue({ text: "Good idea.\n\nNO_REPLY" }, { text: "NO_REPLY." }, { text: "ok" });

    await backend.generate(request(1, "batch one"));
    await backend.generate(request(2, "batch two"));
    await backend.generate(request(3, "batch three"));

    const third = mock.chatRequests()[2]?.body.messages as Array<{ role: string; content: string }>;
    expect(third.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(third[2]?.content).toBe("Good idea.");
    expect(third[4]?.content).toBe("NO_REPLY");
  });

  it("keeps the system message byte-identical across dispatches; after a NO_REPLY user and assistant still alternate", async () => {
    const backend = createOpenAIBackend({ llm: llm(), env: NO_ENV });
    mock.enqueue({ text: "first answer" }, { text: "NO_REPLY" }, { text: "third answer" });

    await backend.generate(request(1, "batch one"));
    expect((await backend.generate(request(2, "batch two"))).text).toBe("NO_REPLY");
    await backend.generate(request(3, "batch three", { trigger: "mention" }));

    const sent = mock.chatRequests().map((r) => r.body.messages as Array<{ role: string; content: string }>);
    expect(sent.map((m) => m[0])).toEqual([
      { role: "system", content: PREFIX },
      { role: "system", content: PREFIX },
      { role: "system", content: PREFIX },
    ]);
    expect(sent[2]?.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(sent[2]?.[2]?.content).toBe("first answer");
    expect(sent[2]?.[4]?.content).toBe("NO_REPLY");
    // Each request is the previous one plus the new turn: the provider's prefix cache can hit.
    expect(sent[1]?.slice(0, 3)).toEqual(sent[0]?.concat([{ role: "assistant", content: "first answer" }]));

    const conv = backend.conversations.peek("alice.agentcp.io", "g1")!;
    // The stored conversation alternates too: system, then user/assistant pairs.
    expect(conv.entries.map((e) => e.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(conv.filterByTag("dispatch", 2).map((e) => [e.role, e.content, e.tags.silent])).toEqual([
      ["user", expect.any(String), undefined],
      ["assistant", "NO_REPLY", 1],
    ]);
    expect(conv.filterByTag("dispatch", 3).map((e) => [e.role, e.tags.trigger])).toEqual([
      ["user", "mention"],
      ["assistant", "mention"],
    ]);
    expect(conv.entries.at(-1)?.usage).toEqual({ promptTokens: 10, completionTokens: 5 });
  });

  it("onRequest sees each request body exactly as the server receives it (start --show-prompts)", async () => {
    const seen: unknown[] = [];
    const backend = createOpenAIBackend({ llm: llm(), env: NO_ENV, onRequest: (body) => seen.push(body) });
    mock.enqueue({ text: "NO_REPLY" }, { text: "ok" });
    await backend.generate(request(1, "batch one"));
    await backend.generate(request(2, "batch two"));
    expect(seen).toHaveLength(2);
    for (const [i, body] of seen.entries()) expect(mock.chatRequests()[i]!.body).toMatchObject(body as object);
    expect((seen[1] as { messages: Array<{ role: string }> }).messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
  });

  it("retries an HTTP 500 through the SDK and then succeeds", async () => {
    const logger = createMemoryLogger();
    const backend = createOpenAIBackend({ llm: llm({ maxRetries: 2 }), env: NO_ENV, logger });
    mock.enqueue({ status: 500, errorMessage: "upstream exploded" }, { text: "after retry" });

    const result = await backend.generate(request(1, "hi"));

    expect(result.text).toBe("after retry");
    expect(mock.chatRequests().map((r) => r.step?.status ?? 200)).toEqual([500, 200]);
    expect(backend.stats()).toMatchObject({ calls: 1, errors: 0 });
    expect(logger.entries.some((e) => e.event === "llm.sdk" && String(e.fields.message).includes("retrying"))).toBe(true);
  });

  it("fails fast on HTTP 400 with a typed error, logs it with context, and rolls the turn back", async () => {
    const logger = createMemoryLogger();
    const backend = createOpenAIBackend({ llm: llm({ maxRetries: 2 }), env: NO_ENV, logger });
    mock.enqueue({ status: 400, errorMessage: "bad request: messages too long" });

    const err = await rejection(backend.generate(request(7, "the failing batch")));

    expect(err).toMatchObject({ code: "LLM_BAD_REQUEST", status: 400, retryable: false, identityId: "alice.agentcp.io", groupId: "g1", dispatchId: 7 });
    expect(mock.chatRequests()).toHaveLength(1); // not retried
    expect(backend.stats()).toMatchObject({ calls: 1, errors: 1 });
    const failed = logger.entries.find((e) => e.event === "llm.failed");
    expect(failed).toMatchObject({ level: "debug", fields: { identityId: "alice.agentcp.io", groupId: "g1", dispatchId: 7, code: "LLM_BAD_REQUEST", status: 400 } });

    // The group client retries the batch: it must appear once, not twice.
    await backend.generate(request(7, "the failing batch"));
    const roles = (mock.chatRequests()[1]?.body.messages as Array<{ role: string }>).map((m) => m.role);
    expect(roles).toEqual(["system", "user"]);
  });

  it("times out a model that does not answer (LLM_TIMEOUT, retryable)", async () => {
    // Below the config minimum on purpose: the schema guards users, the test wants speed.
    const backend = createOpenAIBackend({ llm: llm({ timeoutMs: 150, maxRetries: 0 }), env: NO_ENV });
    mock.enqueue({ delayMs: 5000 });
    const err = await rejection(backend.generate(request(1, "hi")));
    expect(err).toMatchObject({ code: "LLM_TIMEOUT", retryable: true, dispatchId: 1 });
    expect(backend.conversations.peek("alice.agentcp.io", "g1")?.entries).toHaveLength(1);
  });

  it("times out a stream that stalls after the headers (LLM_TIMEOUT)", async () => {
    const backend = createOpenAIBackend({ llm: llm({ stream: true, timeoutMs: 150, maxRetries: 0 }), env: NO_ENV });
    mock.enqueue({ text: "this will never finish", stallAfterChunks: 2 });
    const err = await rejection(backend.generate(request(1, "hi")));
    expect(err).toMatchObject({ code: "LLM_TIMEOUT", retryable: true });
  });

  it("aborts when the caller's signal fires (LLM_ABORTED, not retryable)", async () => {
    const backend = createOpenAIBackend({ llm: llm({ maxRetries: 0 }), env: NO_ENV });
    mock.enqueue({ delayMs: 5000 });
    const ac = new AbortController();
    const p = backend.generate(request(1, "hi", { signal: ac.signal }));
    setTimeout(() => ac.abort(), 20);
    expect(await rejection(p)).toMatchObject({ code: "LLM_ABORTED", retryable: false });
  });

  it("does not keep the two-phase 'decide' call in the conversation", async () => {
    const backend = createOpenAIBackend({ llm: llm(), env: NO_ENV });
    mock.enqueue({ text: '{"want_to_reply":true}' }, { text: "the reply" });
    await backend.generate(request(1, "batch", { phase: "decide" }));
    await backend.generate(request(1, "batch", { phase: "reply" }));
    const roles = mock.chatRequests().map((r) => (r.body.messages as Array<{ role: string }>).map((m) => m.role));
    expect(roles).toEqual([
      ["system", "user"],
      ["system", "user"],
    ]);
    expect(backend.conversations.peek("alice.agentcp.io", "g1")?.toChatMessages().map((m) => m.content)).toEqual([
      PREFIX,
      expect.stringContaining("batch"),
      "the reply",
    ]);
  });

  it("compresses the oldest turns into one summary once the history passes historyTokenLimit", async () => {
    const logger = createMemoryLogger();
    const backend = createOpenAIBackend({ llm: llm({ historyTokenLimit: 500 }), env: NO_ENV, logger });
    const body = (d: number) => `[msg_id:${d}] bob.agentcp.io: ${"lorem ipsum ".repeat(40)}`; // ≈ 130 tokens
    for (let d = 1; d <= 8; d++) {
      mock.enqueue({ text: `reply ${d}` });
      await backend.generate(request(d, body(d)));
    }
    const sent = mock.chatRequests().map((r) => r.body.messages as Array<{ role: string; content: string }>);
    expect(sent.every((m) => m[0]?.content === PREFIX && m[0]?.role === "system")).toBe(true);
    const last = sent[7]!;
    expect(last[1]?.role).toBe("user");
    expect(last[1]?.content).toMatch(/^\[Earlier in this group, compressed: \d+ dispatches, \d+ messages from bob\.agentcp\.io, carol\.agentcp\.io/);
    expect(last.at(-1)?.content).toContain("[msg_id:8]");
    // Bounded: far fewer messages than 8 full turns would need (1 + 8×2 − 1).
    expect(last.length).toBeLessThan(10);
    expect(logger.entries.filter((e) => e.event === "conversation.compressed").length).toBeGreaterThan(0);
  });

  it("persists the conversation through the file state store and resumes it after a restart", async () => {
    const store = createFileStateStore({ dir: stateDir });
    const first = createOpenAIBackend({
      llm: llm(),
      env: NO_ENV,
      conversations: createConversationRegistry({ historyTokenLimit: 8000, persistence: store }),
    });
    mock.enqueue({ text: "remember me", usage: { prompt_tokens: 30, completion_tokens: 3, cached_tokens: 0 } });
    await first.generate(request(1, "before the restart"));
    await first.close?.();

    // A new process: new store object, new registry, same directory.
    const second = createOpenAIBackend({
      llm: llm(),
      env: NO_ENV,
      conversations: createConversationRegistry({ historyTokenLimit: 8000, persistence: createFileStateStore({ dir: stateDir }) }),
    });
    mock.enqueue({ text: "I remember" });
    await second.generate(request(1, "after the restart"));

    const messages = mock.chatRequests()[1]?.body.messages as Array<{ role: string; content: string }>;
    expect(messages).toEqual([
      { role: "system", content: PREFIX },
      { role: "user", content: "## Situation\nvitality: ACTIVE\ndispatch: 1\n\nbefore the restart" },
      { role: "assistant", content: "remember me" },
      { role: "user", content: "## Situation\nvitality: ACTIVE\ndispatch: 1\n\nafter the restart" },
    ]);
    const saved = createFileStateStore({ dir: stateDir }).loadConversation("alice.agentcp.io", "g1") as { entries: unknown[] };
    expect(saved.entries).toHaveLength(5);
    expect(saved.entries[2]).toMatchObject({ role: "assistant", usage: { promptTokens: 30, completionTokens: 3, cachedTokens: 0 } });
  });

  it("serialises concurrent calls of one group, so the second sees the first's reply", async () => {
    const backend = createOpenAIBackend({ llm: llm(), env: NO_ENV });
    mock.enqueue({ text: "slow first", delayMs: 50 }, { text: "second" });
    const [a, b] = await Promise.all([backend.generate(request(1, "one")), backend.generate(request(2, "two"))]);
    expect([a.text, b.text]).toEqual(["slow first", "second"]);
    const roles = (mock.chatRequests()[1]?.body.messages as Array<{ role: string; content: string }>).map((m) => m.content.split("\n").at(-1));
    expect(roles).toEqual(["Rules: be brief.", "one", "slow first", "two"]);
  });

  it("uses the default mock reply when nothing is scripted", async () => {
    const backend = createOpenAIBackend({ llm: llm(), env: NO_ENV });
    expect((await backend.generate(request(1, "hi"))).text).toBe(MOCK_DEFAULT_TEXT);
  });
});

describe("joinUserTurns", () => {
  it("merges a summary and the turn after it, so roles alternate", () => {
    expect(
      joinUserTurns([
        { role: "system", content: "S" },
        { role: "user", content: "[summary]" },
        { role: "user", content: "batch" },
        { role: "assistant", content: "NO_REPLY" },
        { role: "user", content: "next" },
      ]),
    ).toEqual([
      { role: "system", content: "S" },
      { role: "user", content: "[summary]\n\nbatch" },
      { role: "assistant", content: "NO_REPLY" },
      { role: "user", content: "next" },
    ]);
  });
});
