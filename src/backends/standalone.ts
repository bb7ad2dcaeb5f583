// The standalone agent back-end: any OpenAI-compatible chat completions endpoint through the
// `openai` SDK, with the seed-002 conversation store per (identity, group). A dispatch opens a
// turn of its conversation, asks the model, and records the reply; a failed call rolls its turn back.
import type { AgentBackend, GenerateRequest, GenerateResult, LlmSettings, Logger } from "../types.ts";
import { childLogger, silentLogger } from "../log.ts";
import { parseIntent, type Intent } from "../monitor/intent.ts";
import { createConversationRegistry, type ConversationRegistry } from "./conversation-registry.ts";
import type { ChatMessage } from "./conversation-entry.ts";
import type { ConversationStore } from "./conversation-store.ts";
import { chatRequestBody, joinUserTurns, NO_REPLY_TOKEN, userTurnContent } from "./chat-request.ts";
import { LlmError, toLlmError } from "./llm-error.ts";
import { resolveLlmSettings, type ResolvedLlmSettings } from "./llm-settings.ts";
import { completeChat, createOpenAIClient, type ModelReply } from "./openai-chat.ts";

export interface BackendStats {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  errors: number;
}

export function createOpenAIBackend(p: {
  llm: LlmSettings;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  conversations?: ConversationRegistry;
  /** Sees each request body just before it is sent (`start --show-prompts`). */
  onRequest?: (body: ReturnType<typeof chatRequestBody>, request: GenerateRequest) => void;
}): AgentBackend & { stats(): BackendStats; readonly settings: ResolvedLlmSettings; readonly conversations: ConversationRegistry } {
  const settings = resolveLlmSettings(p.llm, p.env ?? process.env);
  const logger = p.logger ?? silentLogger;
  if (!settings.configured) {
    throw new LlmError({
      code: "LLM_NOT_CONFIGURED",
      message: "no model configured: set llm.baseUrl / llm.apiKey or OPENAI_BASE_URL / OPENAI_API_KEY",
      retryable: false,
    });
  }
  const conversations = p.conversations ?? createConversationRegistry({ historyTokenLimit: settings.historyTokenLimit, logger });
  const client = createOpenAIClient(settings, logger);
  const stats: BackendStats = { calls: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, errors: 0 };
  const chains = new Map<string, Promise<void>>();

  return {
    name: "openai",
    settings,
    conversations,
    stats: () => ({ ...stats }),
    generate(request: GenerateRequest): Promise<GenerateResult> {
      return runSerially(chains, JSON.stringify([request.identityId, request.groupId]), () => generateNow(request));
    },
    settled(s) {
      // The stored turn becomes what the group saw: the trimmed text, or silence with the reason.
      const conv = conversations.peek(s.identityId, s.groupId);
      if (!conv) return;
      const changed = conv.settleAssistant(s.dispatchId, s.sent ? { sent: true, text: s.text } : { sent: false, reason: s.reason, silentContent: NO_REPLY_TOKEN });
      if (changed) conversations.save(s.identityId, s.groupId);
    },
    async close() {
      conversations.saveAll();
    },
  };

  async function generateNow(request: GenerateRequest): Promise<GenerateResult> {
    const { identityId, groupId, dispatchId } = request;
    const log = childLogger(logger, { identityId, groupId, dispatchId });
    const conv = conversations.get(identityId, groupId, request.stablePrefix);
    const { messages, turn } = openTurn(conv, request, conversations.historyTokenLimit, log);
    showRequest(messages, request, log);
    stats.calls += 1;
    const started = Date.now();
    let reply: ModelReply;
    try {
      reply = await askModel(messages, request, log, started);
    } catch (err) {
      if (turn !== undefined) conv.rollbackTo(turn);
      throw err;
    }

    const { text, usage } = reply;
    countUsage(reply);
    const intent = parseIntent(text);
    if (turn !== undefined) {
      recordReply(conv, turn, request, reply, intent);
      conversations.save(identityId, groupId);
    }
    log.log("debug", "llm.reply", {
      phase: request.phase ?? "reply",
      chars: text.length,
      silent: !intent.reply,
      promptTokens: usage?.promptTokens,
      completionTokens: usage?.completionTokens,
      cachedTokens: usage?.cachedTokens,
      ms: Date.now() - started,
    });
    return { text, ...(usage ? { usage } : {}) };
  }

  /** `start --show-prompts`: a failing observer is logged and never stops the call. */
  function showRequest(messages: ChatMessage[], request: GenerateRequest, log: Logger): void {
    if (!p.onRequest) return;
    try {
      p.onRequest(chatRequestBody(settings, messages), request);
    } catch (err) {
      log.log("warn", "llm.on-request-failed", { error: String(err) });
    }
  }

  /** One model call; its failure comes out as an {@link LlmError} with the detail logged. */
  async function askModel(messages: ChatMessage[], request: GenerateRequest, log: Logger, started: number): Promise<ModelReply> {
    let timedOut = false;
    try {
      return await completeChat({ client, settings, messages, signal: request.signal, onIdle: () => (timedOut = true) });
    } catch (err) {
      stats.errors += 1;
      const e = toLlmError(err, request, timedOut);
      // Detail for debugging; the failure's one warn line is the group client's retry line.
      log.log("debug", "llm.failed", {
        code: e.code,
        status: e.status,
        retryable: e.retryable,
        error: e.message,
        model: settings.model,
        stream: settings.stream,
        ms: Date.now() - started,
      });
      throw e;
    }
  }

  function countUsage({ usage }: ModelReply): void {
    if (!usage) return;
    stats.promptTokens += usage.promptTokens;
    stats.completionTokens += usage.completionTokens;
    stats.cachedTokens += usage.cachedTokens ?? 0;
  }
}

/**
 * The conversation's side of one dispatch: the messages to send and, for a reply call, the turn
 * it opened (the rollback mark). The two-phase "decide" call is a question about this batch, not
 * a turn of the conversation: it is sent with the history but not kept (no turn). The reply call
 * that follows records the batch once.
 */
function openTurn(
  conv: ConversationStore,
  request: GenerateRequest,
  historyTokenLimit: number,
  log: Logger,
): { messages: ChatMessage[]; turn: number | undefined } {
  const content = userTurnContent(request);
  if (request.phase === "decide") return { messages: joinUserTurns([...conv.toChatMessages(), { role: "user", content }]), turn: undefined };
  const turn = conv.appendUser({
    content,
    dispatch: request.dispatchId,
    trigger: request.trigger,
    senders: request.messages.map((m) => m.sender),
    messageCount: request.messages.length,
  });
  const folded = conv.compact(historyTokenLimit);
  if (folded > 0) log.log("info", "conversation.compressed", { foldedTurns: folded, estimatedTokens: conv.estimatedTokens() });
  return { messages: joinUserTurns(conv.toChatMessages()), turn };
}

/**
 * The turn is stored as the group will read it: without a tacked-on NO_REPLY. A silent turn is
 * stored as the bare token, so user and assistant keep alternating (some servers reject two user
 * turns in a row) and the model sees how it stayed silent before.
 */
function recordReply(conv: ConversationStore, turn: number, request: GenerateRequest, reply: ModelReply, intent: Intent): void {
  conv.appendAssistant({
    turn,
    content: intent.reply ? intent.text : NO_REPLY_TOKEN,
    dispatch: request.dispatchId,
    trigger: request.trigger,
    ...(intent.reply ? {} : { silent: true }),
    ...(reply.usage ? { usage: reply.usage } : {}),
    ...(reply.model ? { model: reply.model } : {}),
  });
}

// The group client already runs one dispatch per group at a time; this makes the back-end
// safe on its own, because a rollback of one call must never eat another call's turn.
async function runSerially<T>(chains: Map<string, Promise<void>>, key: string, fn: () => Promise<T>): Promise<T> {
  const prev = chains.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = prev.then(() => mine);
  chains.set(key, tail);
  await prev;
  try {
    return await fn();
  } finally {
    release();
    if (chains.get(key) === tail) chains.delete(key);
  }
}
