// The shape of an identity's direct-conversation state on disk, validated at the edge: a file
// that parses as JSON but has the wrong shape is as corrupt as a torn one.
import { z } from "zod";

const count = z.number().int().min(0);
const END_REASONS = ["peer-end-marker", "peer-empty", "our-end", "agent-turn-cap", "max-length", "idle", "evicted"] as const;

const exchange = z
  .object({
    startedAt: z.number(),
    lastActivityAt: z.number(),
    agentTurns: count,
    ended: z.object({ at: z.number(), reason: z.enum(END_REASONS) }).strict().optional(),
  })
  .strict();

const peer = z
  .object({
    peer: z.string().min(1),
    pending: z.array(z.object({ key: z.string(), sessionId: z.string(), text: z.string(), at: z.number(), sending: z.literal(true).optional() }).strict()),
    seen: z.array(z.string()),
    lastSelfSpeakAt: z.number().nullable(),
    replyHashes: z.array(z.string()),
    replyTexts: z.array(z.string()),
    exchange: exchange.optional(),
    sessionId: z.string().optional(),
  })
  .strict();

export const persistedDirectStateSchema = z
  .object({
    version: z.literal(1),
    /** Each peer's record: its journal (pending, seen), what we said, its exchange, its newest session. */
    peers: z.array(peer),
    /** The allowance every direct conversation of the identity shares. */
    budgetEvents: z.array(z.tuple([z.number(), count, z.number().int().min(0).max(1)])),
    senderCharges: z.array(z.tuple([z.number(), count, z.string()])).optional(),
  })
  .strict();

/** What survives a restart of an identity's direct conversations (src/direct/ writes it through the runtime). */
export type PersistedDirectState = z.infer<typeof persistedDirectStateSchema>;
