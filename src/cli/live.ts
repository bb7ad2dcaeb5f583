// What `start` and `run` share: the model back-end a CLI run uses (the configured model, else the
// offline responder), and the transcript and decision lines they print.
import { createScriptedBackend, offlineReplyText } from "../backends/deterministic.ts";
import { createConversationRegistry } from "../backends/conversation-registry.ts";
import { createOpenAIBackend } from "../backends/standalone.ts";
import { resolveLlmSettings } from "../backends/llm-settings.ts";
import type { DispatchDecision } from "../monitor/monitor.ts";
import type { StateStore } from "../state/file-store.ts";
import type { DirectConversationsParams } from "../direct/conversations.ts";
import type { AgentBackend, ChannelConfig, GenerateRequest, Logger } from "../types.ts";
import { formatDirectRows } from "./transcript.ts";

const OFFLINE_PREFIX = "[offline responder]";

export interface CliBackend {
  backend: AgentBackend;
  /** Saves the model's conversations (a no-op for the offline responder). */
  save(): void;
}

/** The configured model (`llm`, OPENAI_*), else the offline responder that answers mentions and questions. */
export function createCliBackend(p: { config: ChannelConfig; logger: Logger; store: StateStore; out: (s: string) => void; showPrompts: boolean; env?: NodeJS.ProcessEnv }): CliBackend {
  const { config, logger, out } = p;
  const llm = resolveLlmSettings(config.llm, p.env ?? process.env);
  const printRequest = (r: Pick<GenerateRequest, "identityId" | "groupId" | "dispatchId">, text: string) =>
    out(`    ⇢ ${r.identityId} [${r.groupId}] dispatch #${r.dispatchId} request as sent:\n${text.replace(/^/gm, "      ")}`);
  if (llm.configured) {
    const conversations = createConversationRegistry({ historyTokenLimit: llm.historyTokenLimit, persistence: p.store, logger });
    const backend = createOpenAIBackend({
      llm: config.llm,
      logger,
      conversations,
      ...(p.showPrompts ? { onRequest: (body: unknown, r: GenerateRequest) => printRequest(r, JSON.stringify(body, null, 2)) } : {}),
    });
    out(`model: ${llm.model} at ${llm.baseUrl ?? "the OpenAI API"}`);
    return { backend, save: () => conversations.saveAll() };
  }
  let backend: AgentBackend = createScriptedBackend({
    // Mentions and open questions: a question to the room shows the agents settling who answers.
    mode: "helpful",
    replyText: (req) => offlineReplyText(req, OFFLINE_PREFIX),
  });
  out(`no model configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY): using the ${OFFLINE_PREFIX}, which answers mentions and questions`);
  if (p.showPrompts) {
    const inner = backend;
    backend = {
      ...inner,
      generate: (r) => {
        printRequest(r, `[system]\n${r.systemPrompt}\n[user]\n${r.body}`);
        return inner.generate(r);
      },
    };
  }
  return { backend, save: () => {} };
}

/** The transcript rows (one message's header, then continuation rows): see transcript.ts. */
export { createTranscript } from "./transcript.ts";

export function decisionLine(d: DispatchDecision): string {
  const o = d.outcome;
  const verdict = o.kind === "sent" ? `sent ${o.replyType}` : `skipped: ${o.reason}${d.detail ? ` (${d.detail})` : ""}`;
  if (d.conversation?.kind === "direct") {
    // One to one: no vitality, no mentions to count.
    return `    ↳ ${d.identityId} [dm ${d.conversation.peer}] dispatch #${d.dispatchId} direct · ${d.messageIds.length} msg(s) · reply_type ${d.replyType ?? "-"} · budget ${d.budgetRatio.toFixed(2)} → ${verdict}`;
  }
  return (
    `    ↳ ${d.identityId} [${d.groupId}] dispatch #${d.dispatchId} ${d.trigger} · ${d.messageIds.length} msg(s) · ` +
    `${d.vitality.state} ${d.vitality.messagesIn5m}/${d.vitality.uniqueSpeakersIn5m} · mentions ${d.mentionInfo.mentionCount} · ` +
    `reply_type ${d.replyType ?? "-"} · budget ${d.budgetRatio.toFixed(2)} → ${verdict}`
  );
}

type DirectEventOf = Parameters<NonNullable<DirectConversationsParams["onEvent"]>>[0];

/**
 * The direct messages of `identityId` (`aid`) as transcript rows (transcript.ts: the header at the
 * edge, the rest on continuation rows): `time [dm] from → to: text`, a refused sender with why, and
 * the end of an exchange with its reason.
 */
export function directLine(identityId: string, aid: string, e: DirectEventOf, width = Number.POSITIVE_INFINITY, now: number = Date.now()): string {
  const time = new Date(e.type === "received" || e.type === "sent" ? e.at : now).toISOString().slice(11, 19);
  const rows = (from: string, to: string, content: string, marker?: "agent") => formatDirectRows({ time, from, to, marker, content, width }).join("\n");
  switch (e.type) {
    case "received":
      return rows(e.peer, aid, e.text);
    case "sent":
      return rows(aid, e.peer, e.text, "agent");
    case "refused":
      return `${rows(e.peer, aid, e.text)}\n    ↳ ${identityId} [dm ${e.peer}] refused: ${e.reason} (nothing reaches the model)`;
    case "not-answered":
      return `    ↳ ${identityId} [dm ${e.peer}] not answered: ${e.reason}`;
    case "ended":
      return `    ↳ ${identityId} [dm ${e.peer}] exchange ended: ${e.reason}`;
  }
}
