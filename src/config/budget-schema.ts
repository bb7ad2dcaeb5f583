// The model-call allowances (addressed, unaddressed, orphaned questions) and the orphan path's
// timing: the parts of a group's settings that say what the agent may spend, and when an open
// question nobody answered becomes its to take. Part of the schema (schema.ts re-exports them).
import { z } from "zod";

const ms = (max = 24 * 3600_000) => z.number().int().min(0).max(max);

const budgetWindow = z
  .object({
    messages: z.number().int().min(0).describe("Model calls allowed in the window"),
    tokens: z.number().int().min(0).describe("Tokens (prompt + completion) allowed in the window"),
  })
  .strict();

// One real prompt: the standalone conversation may hold `llm.historyTokenLimit` (8000) tokens, plus
// the system prompt, the batch and the reply. The allowances below are counted in such calls, so a
// window's token limit never runs out before its call limit on ordinary prompts.
const TOKENS_PER_CALL = 12_000;
const allowance = (messages: number) => ({ messages, tokens: messages * TOKENS_PER_CALL });

// Addressed talk (mentions, replies to our messages, engaged follow-ups): sized so that a person
// talking to the agent is never starved. 3h: one addressed line every 20 s held for three hours;
// 5m: a burst at twice that pace (a live back-and-forth or a meeting sends a line every ~10 s),
// so the short window gives headroom above the long one instead of equalling it; 24h: one every
// 30 s for twelve hours — a whole working day of conversation. Follow-ups are paced to leave a
// part of the 5-minute share for mentions (src/group/dispatch-gate.ts). Runaway agent-to-agent
// talk is held by the loop guard and the agent gap, not here.
const ADDRESSED_DEFAULT = { "5m": allowance(30), "3h": allowance(540), "24h": allowance(1440) };
// Unaddressed talk (joining in unprompted) stays a small share: at most 2 calls in any 5 minutes,
// 12 in 3 hours (one every 15 min), 48 a day — a fraction of what answering people may use.
const UNADDRESSED_DEFAULT = { "5m": allowance(2), "3h": allowance(12), "24h": allowance(48) };
// The windows bound unaddressed calls per hour; on a slow channel that is still many calls per
// message. So unaddressed talk also follows the channel's pace: one call per this many lines of
// others. We hold ourselves to at most 10 model calls per 100 messages; joining in unprompted gets
// a quarter of that (one per 40), the rest is kept for talk addressed to the agent.
const UNADDRESSED_EVERY_DEFAULT = 40;
// Orphaned questions (a person's open question nobody answered, src/group/orphans.ts): unprompted
// talk like joining in, so the same scale, but an allowance of its own — chatter can never spend
// what an unanswered person needs, and neither takes from what answering people who address us needs.
// These numbers are for a channel of ordinary pace: on a busy one each window widens to the agents'
// line share of what others wrote in it (src/monitor/budget-windows.ts paceScaledOrphanAllowance).
const ORPHAN_DEFAULT = UNADDRESSED_DEFAULT;

const budgetWindows = (defaults: typeof ADDRESSED_DEFAULT) =>
  z
    .object({
      "5m": budgetWindow.default(defaults["5m"]),
      "3h": budgetWindow.default(defaults["3h"]),
      "24h": budgetWindow.default(defaults["24h"]),
    })
    .strict()
    .default(defaults);

export const budgetSchema = z
  .object({
    enabled: z.boolean().default(true).describe("false: no budget gate, and budget_usage_ratio is 0"),
    addressed: budgetWindows(ADDRESSED_DEFAULT).describe("Allowance for mentions, replies to us and engaged follow-ups"),
    unaddressed: budgetWindows(UNADDRESSED_DEFAULT).describe("Allowance for joining in unprompted"),
    unaddressedEvery: z
      .number()
      .int()
      .min(0)
      .max(100_000)
      .default(UNADDRESSED_EVERY_DEFAULT)
      .describe("Joining in unprompted follows the channel's pace: at most one unaddressed model call per this many messages of others (0: no such limit)"),
    orphan: budgetWindows(ORPHAN_DEFAULT).describe(
      "Allowance for answering orphaned questions (open questions nobody answered), in a room of agents; on a busy channel each window allows at least orphans.maxAgentShare of the lines others wrote in it",
    ),
  })
  .strict();

// An open question from a person that nobody answered (src/group/orphans.ts). None of these is
// fitted to a log: the grace is how long a person who knows the answer takes to notice the
// question and type a short reply (reading a line ~2 s, typing ~30 words at 40 wpm ~45 s), so
// people answer first; the spread is longer than a model usually takes to write a short answer,
// so the agent ranked first has spoken before the next one's turn comes; fresh is how long an
// answer still meets its asker — chat moves on within minutes, and past that an answer intrudes;
// the agents' share is what a room of people tolerates from helpers: one line in twenty.
export const orphansSchema = z
  .object({
    enabled: z.boolean().default(true).describe("In a room of agents, one agent answers an open question nobody answered after graceMs"),
    graceMs: ms(3600_000)
      .default(60_000)
      .describe("How long people have to answer an open question before it is orphaned (with adaptiveGrace: until the room's pace is known, and the middle of the range it may scale over)"),
    adaptiveGrace: z
      .boolean()
      .default(true)
      .describe("Scale the grace with how fast the room's people answer each other: 1.5 × their median reply time, within half and twice graceMs"),
    spreadMs: ms(3600_000).default(30_000).describe("The agents of a room take an orphaned question in turn over this span (each at its own rank), so one answers and the others see it"),
    freshMs: ms(24 * 3600_000).default(180_000).describe("No agent answers an orphaned question later than this after it was asked"),
    // Agents help a room of people; they do not take it over. Counted in lines, not time, so it
    // holds on a slow channel and a busy one alike; over the day (the longest budget window), so a
    // run of questions nobody answers after a quiet stretch can each be helped.
    maxAgentShare: z
      .number()
      .min(0.01)
      .max(1)
      .default(0.05)
      .describe(
        "In a room of agents, an orphaned question (or a follow-up that is only possibly ours) is taken only while agents' lines (ours and others') of the last 24 h stay within this share of people's lines (at least 100 of them counted: 0.05 allows 5 lines in a fresh room)",
      ),
  })
  .strict();
