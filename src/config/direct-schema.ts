// Direct messages per identity: who may talk to the agent one to one (`dmPolicy`, `allowFrom`,
// `denyFrom` — the names every OpenClaw channel uses) and the limits that end an exchange, so two
// agents never talk for ever. Part of the one schema (schema.ts) the code validates with and the
// host manifest is generated from.
import { z } from "zod";

export const DM_POLICIES = ["pairing", "allowlist", "open", "disabled"] as const;
export type DmPolicy = (typeof DM_POLICIES)[number];

const aidOrPattern = z.string().min(1).max(200);
const ms = (min: number, max: number) => z.number().int().min(min).max(max);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const dmPolicySchema = z
  .enum(DM_POLICIES)
  .optional()
  .describe(
    "Who may message the agent directly: pairing (an unknown sender gets a one-line code, the owner approves it), allowlist (the owner, humans and allowFrom), open (anyone not denied), disabled (nobody). Default: allowlist standalone, the host's pairing inside OpenClaw",
  );

export const dmAllowFromSchema = z
  .array(aidOrPattern)
  .max(1000)
  .optional()
  .describe("Senders (aids, or patterns with *) who may message the agent directly under allowlist and pairing, besides the owner and humans");

export const dmDenyFromSchema = z
  .array(aidOrPattern)
  .max(1000)
  .optional()
  .describe("Senders (aids, or patterns with *) whose direct messages are never answered, whatever dmPolicy says; the owner is never refused");

// The public ACP channel for OpenClaw ends a session on end markers, at 1000 turns, after 24 h idle
// or 48 h in all, and keeps 400 sessions. An exchange between agents here is meant to end sooner:
// a few turns settle what two agents have to say, and a stuck one costs its share of the budget.
export const directSchema = z
  .object({
    endMarkers: z
      .array(z.string().min(3).max(40))
      .min(1)
      .max(20)
      .default(["[END]", "[GOODBYE]", "[NO_REPLY]", "NO_REPLY"])
      .describe("A direct message holding one of these ends the exchange unanswered (an empty one does too)"),
    maxAgentTurns: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(8)
      .describe("Replies to a peer that is not a known person before the exchange ends (consecutive agent-to-agent turns)"),
    idleTimeoutMs: ms(1000, 7 * 24 * HOUR).default(30 * MINUTE).describe("An exchange with no message either way for this long ends"),
    maxSessionMs: ms(1000, 30 * 24 * HOUR).default(4 * HOUR).describe("An exchange ends this long after its first message, however lively"),
    maxConversations: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(50)
      .describe("Open exchanges at once; a new one ends the least recently active (the owner's is ended last)"),
    reopenAfterMs: ms(0, 7 * 24 * HOUR)
      .default(10 * MINUTE)
      .describe("An agent whose exchange ended (end marker, turn cap, length) is not answered again until it has been quiet this long; a person is answered at once"),
    announceEnd: z
      .boolean()
      .default(true)
      .describe("Send the first end marker when a turn cap or the length ends an exchange with an agent, so its side stops too"),
    refusalNotice: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("One line sent (once per sender and hour) to a sender the policy refuses; default: nothing is sent"),
  })
  .strict();

export type DirectSettings = z.infer<typeof directSchema>;

/** The identity's direct-message limits with every default filled in. */
export function resolveDirectSettings(direct: z.input<typeof directSchema> | undefined): DirectSettings {
  return directSchema.parse(direct ?? {});
}
