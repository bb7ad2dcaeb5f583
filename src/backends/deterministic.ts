// A deterministic stand-in for a model: tests, `replay` and the offline `start` use it. It never
// looks at the clock or a random source, so the same requests always get the same answers.
import { isQuestion } from "../monitor/floor.ts";
import { wait } from "../util/wait.ts";
import type { AgentBackend, GenerateRequest, GenerateResult } from "../types.ts";

export type ScriptedMode = "silent" | "mention" | "always" | "helpful";

export interface ScriptedBackendParams {
  /**
   * silent: always NO_REPLY · mention: replies only when mentioned · always: always replies ·
   * helpful: replies when mentioned or when the batch holds a question (a line ending in `?`/`？`).
   */
  mode: ScriptedMode;
  /** What it replies; default: a labelled offline echo of the newest message. */
  replyText?: string | ((request: GenerateRequest) => string);
  /** Simulated model latency (driven by timers, so fake timers control it). Default 0. */
  latencyMs?: number;
  /** Keep every request in `calls` (default true); a long replay only counts them. */
  keepCalls?: boolean;
}

/** `calls`: the requests received (empty with `keepCalls: false`); `callCount`: how many. */
export type ScriptedBackend = AgentBackend & { readonly calls: GenerateRequest[]; readonly callCount: number };

export class BackendAbortedError extends Error {
  readonly code = "BACKEND_ABORTED";
  constructor() {
    super("generate() aborted");
    this.name = "BackendAbortedError";
  }
}

export function createScriptedBackend(p: ScriptedBackendParams): ScriptedBackend {
  const calls: GenerateRequest[] = [];
  let callCount = 0;
  const wants = (req: GenerateRequest) =>
    p.mode === "always" || ((p.mode === "mention" || p.mode === "helpful") && req.mentionInfo.mentioned) || (p.mode === "helpful" && holdsQuestion(req));
  const replyFor = (req: GenerateRequest) =>
    typeof p.replyText === "function" ? p.replyText(req) : (p.replyText ?? (p.mode === "helpful" ? helpfulReply(req) : defaultReply(req)));

  return {
    name: `scripted:${p.mode}`,
    calls,
    get callCount() {
      return callCount;
    },
    async generate(request) {
      callCount++;
      if (p.keepCalls !== false) calls.push(request);
      try {
        await wait(p.latencyMs ?? 0, request.signal);
      } catch {
        throw new BackendAbortedError();
      }
      let text: string;
      if (request.phase === "decide") {
        text = JSON.stringify({ want_to_reply: wants(request), reply_type: request.replyType, delay_hint: "fast" });
      } else {
        text = wants(request) ? replyFor(request) : "NO_REPLY";
      }
      return { text, usage: usageOf(request, text) };
    },
  };
}

/** Deterministic usage: ~4 characters per token, like the estimate the monitor uses. */
function usageOf(request: GenerateRequest, text: string): NonNullable<GenerateResult["usage"]> {
  return {
    promptTokens: Math.ceil((request.systemPrompt.length + request.body.length) / 4),
    completionTokens: Math.ceil(text.length / 4),
  };
}

/**
 * The offline responder's answer (`start` without a model): whom it heard and what, quoted, with a
 * reference derived from the question's text. Answers to different questions share their frame,
 * which alone made two questions to the same agent look like one reply said twice (weak dedup
 * compares character pairs); the reference differs in most of its characters from one question
 * to the next, so they read as the different answers they are. The same question gets the very
 * same answer, which dedup still recognises as a repeat.
 */
export function offlineReplyText(request: Pick<GenerateRequest, "messages">, label: string): string {
  const asked = [...request.messages].reverse().find((m) => m.isMention) ?? request.messages.at(-1);
  const content = asked?.content ?? "";
  const ref = `${fnv1a(content, 0x811c9dc5)}-${fnv1a(content, 0x9e3779b9)}`;
  return `${label} heard ${asked?.sender ?? "someone"}: "${[...content].slice(0, 80).join("")}" · ref ${ref}`;
}

/** FNV-1a over UTF-16 code units from `seed`, as 8 hex digits. */
function fnv1a(text: string, seed: number): string {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

function defaultReply(request: GenerateRequest): string {
  const last = request.messages.at(-1);
  if (!last) return "(offline responder) nothing to answer";
  const snippet = [...last.content].slice(0, 60).join("");
  return `(offline responder) ${last.sender} said: ${snippet}`;
}

function holdsQuestion(request: GenerateRequest): boolean {
  return request.messages.some((m) => isQuestion(m.content));
}

/**
 * helpful: answers the newest mention, else the newest question, in words of its own — drawn from
 * a hash of who answers and what — so two agents' answers to one question do not read alike (the
 * worst case for a room: no dedup of each other's answers saves it). Never ends in a question.
 */
function helpfulReply(request: GenerateRequest): string {
  const ms = request.messages;
  const target = ms.findLast((m) => m.isMention) ?? ms.findLast((m) => isQuestion(m.content)) ?? ms.at(-1);
  if (!target) return "(offline responder) nothing to answer.";
  let h = 0x811c9dc5;
  for (const c of `${request.identityId}\u0000${target.msgId}`) h = Math.imul(h ^ c.codePointAt(0)!, 0x01000193) >>> 0;
  const words: string[] = [];
  for (let i = 0; i < 8; i++) {
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
    words.push(HELPFUL_WORDS[h % HELPFUL_WORDS.length]!);
  }
  return `(offline responder) ${target.sender}: ${words.join(" ")}.`;
}

const HELPFUL_WORDS = (
  "check restart config package kernel driver update upgrade install remove log file path permission " +
  "service network cache version module setting option flag command terminal manual docs release build " +
  "mirror source partition mount boot user group key token session socket port proxy firewall backup"
).split(" ");
