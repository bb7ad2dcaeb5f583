// The per-sender share of the addressed allowance: whoever addressed us pays for the model call
// that answers them, and no one sender (the owner excepted) may use more than `senderShare` of any
// window's calls or tokens. So one member flooding mentions spends their share and then gets
// silence, while the rest of the allowance is still there for everyone else. The owner's calls are
// checked against the whole allowance counting only their own calls: strangers can never use up
// what the owner needs. Pure: charges are pruned on read against an explicit `now` (server time).
import type { BudgetSettings, BudgetWindowName, InboundMessage } from "../types.ts";
import { BUDGET_WINDOW_MS } from "../config/budget-windows.ts";
import type { BudgetEvent } from "./budget-windows.ts";

/** One addressed model call: [server-time ms, tokens, payer (lower-cased aid)]. */
export type SenderCharge = [at: number, tokens: number, sender: string];

const WINDOWS = ["5m", "3h", "24h"] as const satisfies readonly BudgetWindowName[];
const LONGEST_MS = BUDGET_WINDOW_MS["24h"];

export type PayerChoice =
  /** Nobody addressed us by name in the batch (an unaddressed dispatch): no share applies. */
  | { ok: true; payer: undefined; owner: false }
  | { ok: true; payer: string; owner: boolean }
  | {
      ok: false;
      reason: "sender-over-share";
      /** Every sender who addressed us, each over their share. */
      senders: string[];
      window: BudgetWindowName;
      limit: "messages" | "tokens";
      used: number;
      max: number;
    };

/** The senders whose lines in the batch are for us (mentions, replies, engaged follow-ups), first come first. */
export function addressingSenders(messages: readonly InboundMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.passive !== undefined || !(m.isMention || m.engaged || m.maybeOurs === true)) continue;
    const s = m.sender.toLowerCase();
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** One sender's allowance per window: `share` of the addressed one, at least one call. */
export function shareLimits(settings: BudgetSettings, share: number): Record<BudgetWindowName, { messages: number; tokens: number }> {
  const out = {} as Record<BudgetWindowName, { messages: number; tokens: number }>;
  for (const w of WINDOWS) {
    const limit = settings.addressed[w];
    out[w] = { messages: Math.max(1, Math.floor(limit.messages * share)), tokens: Math.max(1, Math.floor(limit.tokens * share)) };
  }
  return out;
}

type ShareCheck = { ok: true } | { ok: false; window: BudgetWindowName; limit: "messages" | "tokens"; used: number; max: number };

/** May `sender` pay for one more call (of about `nextCallTokens`) now? An event exactly a window old has left it. */
export function checkSenderShare(p: { charges: readonly SenderCharge[]; sender: string; settings: BudgetSettings; share: number; now: number; nextCallTokens?: number }): ShareCheck {
  const limits = shareLimits(p.settings, p.share);
  for (const w of WINDOWS) {
    const cutoff = p.now - BUDGET_WINDOW_MS[w];
    let messages = 0;
    let tokens = 0;
    for (const [at, t, s] of p.charges) {
      if (at <= cutoff || s !== p.sender) continue;
      messages++;
      tokens += t;
    }
    const max = limits[w];
    if (messages >= max.messages) return { ok: false, window: w, limit: "messages", used: messages, max: max.messages };
    // A call never starts over the token share, but a lone call larger than the share may use it whole.
    if (tokens > 0 && tokens + (p.nextCallTokens ?? 0) > max.tokens) return { ok: false, window: w, limit: "tokens", used: tokens, max: max.tokens };
  }
  return { ok: true };
}

/**
 * Who pays for answering this batch: the owner when they addressed us (never limited by a share),
 * else the first sender who addressed us and still has share left. When everyone who addressed us
 * has used their share, the batch is skipped without a model call.
 */
export function choosePayer(p: {
  messages: readonly InboundMessage[];
  owner: string | undefined;
  charges: readonly SenderCharge[];
  settings: BudgetSettings;
  share: number;
  now: number;
  nextCallTokens?: number;
}): PayerChoice {
  const senders = addressingSenders(p.messages);
  if (senders.length === 0) return { ok: true, payer: undefined, owner: false };
  const owner = p.owner?.toLowerCase();
  if (owner !== undefined && senders.includes(owner)) return { ok: true, payer: owner, owner: true };
  if (!p.settings.enabled) return { ok: true, payer: senders[0]!, owner: false };
  let first: Extract<ShareCheck, { ok: false }> | undefined;
  for (const sender of senders) {
    const c = checkSenderShare({ charges: p.charges, sender, settings: p.settings, share: p.share, now: p.now, ...(p.nextCallTokens !== undefined ? { nextCallTokens: p.nextCallTokens } : {}) });
    if (c.ok) return { ok: true, payer: sender, owner: false };
    first ??= c;
  }
  return { ok: false, reason: "sender-over-share", senders, window: first!.window, limit: first!.limit, used: first!.used, max: first!.max };
}

/** `bob.agentcp.io addressed:5m:messages 5/5`: who, and which share ran out. */
export function describeOverShare(c: Extract<PayerChoice, { ok: false }>): string {
  return `${c.senders.join(",")} addressed:${c.window}:${c.limit} ${c.used}/${c.max}`;
}

/** The owner's own calls as budget events: the allowance they are checked against. */
export function ownerBudgetEvents(charges: readonly SenderCharge[], owner: string): BudgetEvent[] {
  return charges.filter((c) => c[2] === owner).map((c) => [c[0], c[1], 1]);
}

/** Appends a charge and drops those older than the longest window. Returns a new array. */
export function recordSenderCharge(charges: readonly SenderCharge[], charge: SenderCharge): SenderCharge[] {
  return pruneSenderCharges([...charges, charge], charge[0]);
}

export function pruneSenderCharges(charges: readonly SenderCharge[], now: number): SenderCharge[] {
  const cutoff = now - LONGEST_MS;
  return charges.filter(([at]) => at > cutoff);
}

/** Calls each sender paid for in the last `windowMs` (status and reports), most first. */
export function chargesBySender(charges: readonly SenderCharge[], now: number, windowMs: number = BUDGET_WINDOW_MS["5m"]): Array<{ sender: string; calls: number; tokens: number }> {
  const by = new Map<string, { calls: number; tokens: number }>();
  for (const [at, tokens, sender] of charges) {
    if (at <= now - windowMs) continue;
    const e = by.get(sender) ?? { calls: 0, tokens: 0 };
    e.calls++;
    e.tokens += tokens;
    by.set(sender, e);
  }
  return [...by].map(([sender, e]) => ({ sender, ...e })).sort((a, b) => b.calls - a.calls || a.sender.localeCompare(b.sender));
}
