// When a direct exchange ends, so that two agents never talk for ever: an end marker (the peer's,
// or an empty message), our own silence (NO_REPLY or an empty reply), a cap on our replies to a
// peer that is not a known person, an idle timeout, a maximum length — and, across exchanges, an
// agent whose exchange ended is not answered again until it has been quiet `reopenAfterMs`. A
// person is answered at once. Pure: times are the local clock's, passed in; the conversation
// (conversation.ts) arms the timers from `deadlines`.
import type { DirectSettings } from "../types.ts";

/** Why an exchange ended. Logged with every end. */
export type ExchangeEnd =
  /** The peer's message held an end marker (`direct.endMarkers`). */
  | "peer-end-marker"
  /** The peer sent an empty message. */
  | "peer-empty"
  /** Our answer was a silence (NO_REPLY, or empty after shaping). */
  | "our-end"
  /** `direct.maxAgentTurns` replies to a peer that is not a known person. */
  | "agent-turn-cap"
  /** `direct.maxSessionMs` after its first message. */
  | "max-length"
  /** `direct.idleTimeoutMs` without a message either way. */
  | "idle"
  /** Closed to make room: `direct.maxConversations` were open (least recently active first). */
  | "evicted";

/** One exchange: when it began, its last message, our replies to a non-person in it, how it ended. Local clock. */
export interface Exchange {
  readonly startedAt: number;
  readonly lastActivityAt: number;
  readonly agentTurns: number;
  readonly ended?: { readonly at: number; readonly reason: ExchangeEnd };
}

export type InboundVerdict =
  | { answer: true; exchange: Exchange; opened: boolean }
  /** Not answered: the message ended the exchange, or the peer (an agent) rests after an end. */
  | { answer: false; exchange: Exchange; reason: "peer-end-marker" | "peer-empty" | "resting" };

export const isEndMarker = (text: string, markers: readonly string[]): boolean => markers.some((m) => text.includes(m));

/** A new exchange, its first message at `now`. */
export const openExchange = (now: number): Exchange => ({ startedAt: now, lastActivityAt: now, agentTurns: 0 });
const end = (ex: Exchange, reason: ExchangeEnd, now: number): Exchange => ({ ...ex, lastActivityAt: Math.max(ex.lastActivityAt, now), ended: { at: now, reason } });

/** A message from the peer at `now`: answer it (in this exchange, or a new one), or not and why. */
export function admitInbound(p: { exchange: Exchange | undefined; text: string; peerIsPerson: boolean; settings: DirectSettings; now: number }): InboundVerdict {
  const { settings, now } = p;
  let ex = p.exchange;
  let opened = false;
  if (ex?.ended !== undefined && !p.peerIsPerson && now - ex.lastActivityAt < settings.reopenAfterMs) {
    // Still resting: the rest counts from its last message, so an agent that keeps writing keeps resting.
    return { answer: false, exchange: { ...ex, lastActivityAt: now }, reason: "resting" };
  }
  if (ex === undefined || ex.ended !== undefined || now - ex.startedAt >= settings.maxSessionMs || now - ex.lastActivityAt >= settings.idleTimeoutMs) {
    ex = openExchange(now);
    opened = true;
  } else ex = { ...ex, lastActivityAt: now };
  const text = p.text.trim();
  if (text === "") return { answer: false, exchange: end(ex, "peer-empty", now), reason: "peer-empty" };
  if (isEndMarker(text, settings.endMarkers)) return { answer: false, exchange: end(ex, "peer-end-marker", now), reason: "peer-end-marker" };
  return { answer: true, exchange: ex, opened };
}

/** Our reply went out at `now`: one more turn when the peer is not a known person, and the cap may end it. */
export function afterReply(p: { exchange: Exchange; peerIsPerson: boolean; settings: DirectSettings; now: number }): Exchange {
  const turns = p.exchange.agentTurns + (p.peerIsPerson ? 0 : 1);
  const ex: Exchange = { ...p.exchange, lastActivityAt: Math.max(p.exchange.lastActivityAt, p.now), agentTurns: turns };
  return !p.peerIsPerson && turns >= p.settings.maxAgentTurns ? end(ex, "agent-turn-cap", p.now) : ex;
}

/** Ends the exchange for `reason` (our silence, a timer, eviction). An ended one stays as it ended. */
export function endExchange(ex: Exchange, reason: ExchangeEnd, now: number): Exchange {
  return ex.ended !== undefined ? ex : end(ex, reason, now);
}

/** When an open exchange ends by itself: idle, or at its maximum length (local times). */
export function deadlines(ex: Exchange, settings: DirectSettings): { idleAt: number; lengthAt: number } {
  return { idleAt: ex.lastActivityAt + settings.idleTimeoutMs, lengthAt: ex.startedAt + settings.maxSessionMs };
}
