// The per-sender share of the addressed allowance: whoever addressed us pays for the model call
// that answers them, and no one sender (the owner excepted) may use more than `senderShare` of any
// window's calls or tokens. So one member flooding mentions spends their share and then gets
// silence, while the rest of the allowance is still there for everyone else. The owner's calls are
// checked against the whole allowance counting only their own calls: strangers can never use up
// what the owner needs. Strangers — senders our config does not name (not the owner, `humans` or
// `agents`) — also share one class allowance, `strangerShare` of each window, however many aids
// they use: forty identities spend no more than the class, and the members we know keep the rest.
// Pure: charges are pruned on read against an explicit `now` (server time).
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
      /** `strangers-over-share`: the first sender who addressed us was refused because strangers together used their class's share. */
      reason: "sender-over-share" | "strangers-over-share";
      /** Every sender who addressed us, each over their share (or a stranger, with the class over its share). */
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
  return checkShare({ ...p, pays: (s) => s === p.sender });
}

/** May the strangers (senders `isStranger` says so of) together pay for one more call now? */
export function checkStrangersShare(p: { charges: readonly SenderCharge[]; isStranger: (sender: string) => boolean; settings: BudgetSettings; share: number; now: number; nextCallTokens?: number }): ShareCheck {
  // One answer per payer: a class check reads each of the window's charges once.
  const memo = new Map<string, boolean>();
  const pays = (s: string) => {
    let v = memo.get(s);
    if (v === undefined) memo.set(s, (v = p.isStranger(s)));
    return v;
  };
  return checkShare({ ...p, pays });
}

function checkShare(p: { charges: readonly SenderCharge[]; pays: (sender: string) => boolean; settings: BudgetSettings; share: number; now: number; nextCallTokens?: number }): ShareCheck {
  const limits = shareLimits(p.settings, p.share);
  for (const w of WINDOWS) {
    const cutoff = p.now - BUDGET_WINDOW_MS[w];
    let messages = 0;
    let tokens = 0;
    for (const [at, t, s] of p.charges) {
      if (at <= cutoff || !p.pays(s)) continue;
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
 * else the first sender who addressed us and still has share left — a stranger only while the
 * strangers' class has share left too. When nobody who addressed us may pay, the batch is skipped
 * without a model call.
 */
export function choosePayer(p: {
  messages: readonly InboundMessage[];
  owner: string | undefined;
  charges: readonly SenderCharge[];
  settings: BudgetSettings;
  share: number;
  /** Senders our config does not name (lower-cased aid in); without it, nobody is a stranger. */
  isStranger?: (sender: string) => boolean;
  /** The strangers' class share of each addressed window. */
  strangerShare?: number;
  now: number;
  nextCallTokens?: number;
}): PayerChoice {
  const senders = addressingSenders(p.messages);
  if (senders.length === 0) return { ok: true, payer: undefined, owner: false };
  const owner = p.owner?.toLowerCase();
  if (owner !== undefined && senders.includes(owner)) return { ok: true, payer: owner, owner: true };
  if (!p.settings.enabled) return { ok: true, payer: senders[0]!, owner: false };
  const next = p.nextCallTokens !== undefined ? { nextCallTokens: p.nextCallTokens } : {};
  let strangers: ShareCheck | undefined;
  let first: { reason: "sender-over-share" | "strangers-over-share"; check: Extract<ShareCheck, { ok: false }> } | undefined;
  for (const sender of senders) {
    if (p.isStranger !== undefined && p.strangerShare !== undefined && p.isStranger(sender)) {
      strangers ??= checkStrangersShare({ charges: p.charges, isStranger: p.isStranger, settings: p.settings, share: p.strangerShare, now: p.now, ...next });
      if (!strangers.ok) {
        first ??= { reason: "strangers-over-share", check: strangers };
        continue;
      }
    }
    const c = checkSenderShare({ charges: p.charges, sender, settings: p.settings, share: p.share, now: p.now, ...next });
    if (c.ok) return { ok: true, payer: sender, owner: false };
    first ??= { reason: "sender-over-share", check: c };
  }
  const { reason, check } = first!;
  return { ok: false, reason, senders, window: check.window, limit: check.limit, used: check.used, max: check.max };
}

/** `bob.agentcp.io addressed:5m:messages 5/5` (or `strangers addressed:5m:messages 15/15`): who, and which share ran out. */
export function describeOverShare(c: Extract<PayerChoice, { ok: false }>): string {
  return `${c.reason === "strangers-over-share" ? "strangers" : c.senders.join(",")} addressed:${c.window}:${c.limit} ${c.used}/${c.max}`;
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
