// The one source of truth for configuration: the code validates with these zod schemas, and the
// OpenClaw manifest's JSON Schema is generated from them (scripts/gen-manifest.ts; a test compares).
import { z } from "zod";
import { secretRefSchema } from "./secret-ref.ts";
import { directSchema, dmAllowFromSchema, dmDenyFromSchema, dmPolicySchema } from "./direct-schema.ts";

export { BUDGET_WINDOWS, type BudgetWindowName } from "./budget-windows.ts";
export { DM_POLICIES, directSchema, resolveDirectSettings, type DirectSettings, type DmPolicy } from "./direct-schema.ts";

const ms = (max = 24 * 3600_000) => z.number().int().min(0).max(max);

export const VITALITY_STATES = ["DORMANT", "COOLING", "ACTIVE", "HEATED"] as const;

export { budgetSchema, orphansSchema } from "./budget-schema.ts";
import { budgetSchema, orphansSchema } from "./budget-schema.ts";

export const replyPolicySchema = z
  .object({
    allowLong: z.boolean().default(false).describe("Allow reply_type=long in calm groups"),
    maxCharsPerMessage: z
      .number()
      .int()
      .min(20)
      .max(10000)
      .default(500)
      .describe("Longer replies are cut at a sentence end (at a word when that would keep under a third), then tailMark"),
    noMarkdown: z.boolean().default(true).describe("Strip Markdown from replies (no_markdown in the prompt)"),
    maxReactionChars: z
      .number()
      .int()
      .min(1)
      .max(32)
      .default(8)
      .describe("A reaction is the reply itself if this short (an emoji counts once), else its first emoji, else its first sentence, clause or word that fits"),
    shortSentences: z.number().int().min(1).max(5).default(2).describe("Sentences a short reply keeps"),
    normalSentences: z.number().int().min(1).max(20).default(5).describe("Sentences a normal reply keeps"),
    tailMark: z.string().max(20).default("…").describe("Appended to a reply cut at maxCharsPerMessage"),
  })
  .strict();

export const dedupSchema = z
  .object({
    historySize: z.number().int().min(1).max(100).default(10).describe("Own replies remembered for the duplicate check (they survive restarts)"),
    // What the other members said lately: an answer someone already gave is not repeated. Twenty
    // lines is a few minutes of a busy group — the time in which a repeat would look like an echo.
    othersHistorySize: z
      .number()
      .int()
      .min(0)
      .max(200)
      .default(20)
      .describe("Recent messages of other members a reply is compared with (0: only our own replies)"),
    similarityThreshold: z.number().min(0).max(1).default(0.8).describe("Character-bigram similarity from which a reply is a near-duplicate"),
    action: z.enum(["skip", "reaction"]).default("skip").describe("What a duplicate becomes: skipped, or downgraded to a reaction"),
  })
  .strict();

const range = z.tuple([ms(), ms()]).refine(([a, b]) => a <= b, "expected [min, max] with min ≤ max");

export const delaySchema = z
  .object({
    enabled: z.boolean().default(true).describe("A random human-like pause before sending"),
    fastMs: range.default([2000, 6000]).describe("Pause range for reaction and short replies"),
    normalMs: range.default([8000, 20000]).describe("Pause range for normal replies"),
    slowMs: range.default([20000, 60000]).describe("Pause range for long replies"),
    onMention: z.boolean().default(false).describe("Also delay replies to mentions"),
  })
  .strict();

export const groupSettingsSchema = z
  .object({
    enabled: z.boolean().default(true).describe("false leaves the group out"),
    subject: z.string().max(200).optional().describe("Group name/topic shown to the model"),
    accessPoint: z
      .string()
      .regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/, "expected an access point domain such as agentcp.io")
      .optional()
      .describe("Access point whose group.<domain> serves this group; default the identity's own"),
    bufferGateMs: ms(600_000).default(3000).describe("Trailing debounce before unaddressed talk is handed over"),
    bufferGateMaxWaitMs: ms(3600_000).default(15000).describe("A message never waits in the buffer longer than this"),
    cooldownMs: ms(3600_000).default(30000).describe("Quiet time after a dispatch ends before the next unaddressed one"),
    cooldownScale: z
      .object({
        DORMANT: z.number().min(0).max(100).default(1).describe("Cooldown multiplier when the group is DORMANT"),
        COOLING: z.number().min(0).max(100).default(1).describe("Cooldown multiplier when the group is COOLING"),
        ACTIVE: z.number().min(0).max(100).default(1).describe("Cooldown multiplier when the group is ACTIVE"),
        HEATED: z.number().min(0).max(100).default(2).describe("Cooldown multiplier when the group is HEATED"),
      })
      .strict()
      .default({ DORMANT: 1, COOLING: 1, ACTIVE: 1, HEATED: 2 }),
    mentionMinIntervalMs: ms(3600_000).default(0).describe("Minimum spacing of mention dispatches"),
    // An agent's mention or reply waits this long before we answer, so two agents cannot trade
    // lines faster than a person could read them; a human's mention is answered at once.
    agentMentionGapMs: ms(600_000)
      .default(5000)
      .describe("Minimum wait before answering a mention or reply from an agent (humans' mentions are instant)"),
    mentionMatch: z
      .enum(["smart", "substring"])
      .default("smart")
      .describe("smart: word boundaries for Latin keywords, substrings for CJK; substring: plain case-insensitive substring"),
    // A conversation ends when the person turns to someone else (a line addressed to another
    // member), and is shared when someone else addresses them; time is only the fallback for one
    // that dies out. Fifteen minutes covers "let me try that" and coming back with the result, and
    // every line the person sends us opens the window again.
    engagedWindowMs: ms(3600_000).default(900000).describe("How long a conversation with a speaker stays open after their last line to us"),
    // People split one thought over several lines (a paste, "err", a second sentence) within
    // seconds; such a line without its own addressee continues the previous one.
    continuationMs: ms(600_000)
      .default(30000)
      .describe("A line without an addressee within this time after the same sender's addressed line continues it"),
    engagedFollowUpMs: ms(600_000)
      .default(5000)
      .describe("An engaged speaker's follow-up dispatches this long after the first of them (lines meanwhile go in the same batch)"),
    vitalityWindowMs: ms(3600_000).default(300000).describe("Window the group's vitality (DORMANT, COOLING, ACTIVE, HEATED) is counted over"),
    vitalityMaxEvents: z.number().int().min(1).max(10000).default(200).describe("Events kept in the vitality window"),
    maxPendingMessages: z
      .number()
      .int()
      .min(1)
      .max(100000)
      .default(500)
      .describe("Messages held before the oldest are dropped as over-capacity"),
    maxRetries: z.number().int().min(0).max(10).default(2).describe("Retries of a batch whose agent side failed, before its messages are dropped as retries-exhausted"),
    retryBackoffMs: ms(600_000).default(2000).describe("Backoff before retry n: this × 2^n"),
    contextFormat: z
      .enum(["lines", "xml"])
      .default("lines")
      .describe("How messages reach the model: one line each, or a compact XML timeline (<m>, <b> own replies, <s> events, <g/> gaps)"),
    maxInboundChars: z.number().int().min(20).max(100000).default(1000).describe("Longer inbound messages are cut with a mark"),
    gapThresholdMs: ms().default(600000).describe("xml format: gaps longer than this get a <g/> mark"),
    decision: z
      .enum(["single", "two-phase"])
      .default("single")
      .describe("two-phase: first ask the model for {want_to_reply, reply_type, delay_hint} (unparseable: silent), then for the reply"),
    maxAgentChain: z.number().int().min(1).max(1000).default(6).describe("Replies to batches without a person's message before the agent waits for a person"),
    allowFrom: z
      .array(z.string().min(1).max(200))
      .max(1000)
      .default([])
      .describe("Only these senders (aids, or patterns with *) may address the agent here; empty: everyone. The owner always may"),
    denyFrom: z
      .array(z.string().min(1).max(200))
      .max(1000)
      .default([])
      .describe("These senders (aids, or patterns with *) never wake the agent here and never reach the model; the owner is never refused"),
    // Two thirds of the addressed allowance per member: one person talking with the agent every
    // 30 s still fits in every window, yet a flood (or a runaway agent) always leaves a third for
    // everyone else. The owner is checked against their own calls only, never the others'.
    senderShare: z
      .number()
      .min(0.01)
      .max(1)
      .default(0.67)
      .describe("Largest share of the addressed allowance one sender (not the owner) may use in each window"),
    // Half the addressed allowance for everyone our config does not name, together: an open group
    // may hold any number of aids, and the members we know (and the owner) always keep the other
    // half. Still 15 calls in 5 minutes and 270 in 3 hours for people we have never met.
    strangerShare: z
      .number()
      .min(0.01)
      .max(1)
      .default(0.5)
      .describe("Largest share of the addressed allowance that senders the config does not name (not the owner, humans or agents) may use together in each window, however many aids they use"),
    tools: z
      .object({
        allow: z.array(z.string().min(1)).optional().describe("Tools the group's turns may use"),
        alsoAllow: z.array(z.string().min(1)).optional().describe("Tools added to the host's policy"),
        deny: z.array(z.string().min(1)).optional().describe("Tools the group's turns never get"),
      })
      .strict()
      .optional()
      .describe("OpenClaw: the tools the agent may use for this group's turns (host tool policy). Default: none where anyone may talk (no allowFrom), the host's own policy otherwise"),
    replyPolicy: replyPolicySchema.default(replyPolicySchema.parse({})),
    budget: budgetSchema.default(budgetSchema.parse({})),
    orphans: orphansSchema.default(orphansSchema.parse({})),
    dedup: dedupSchema.default(dedupSchema.parse({})),
    delay: delaySchema.default(delaySchema.parse({})),
  })
  .strict();

export type GroupSettings = z.infer<typeof groupSettingsSchema>;
export type ReplyPolicySettings = z.infer<typeof replyPolicySchema>;
export type BudgetSettings = z.infer<typeof budgetSchema>;
export type DedupSettings = z.infer<typeof dedupSchema>;
export type DelaySettings = z.infer<typeof delaySchema>;

/** Per-group overrides: every key optional (no defaults, so layers merge), nested objects partial. */
type OptionalShape<S extends z.ZodRawShape> = {
  [K in keyof S]: z.ZodOptional<S[K] extends z.ZodDefault<infer Inner> ? Inner : S[K]>;
};
function optionalShape<S extends z.ZodRawShape>(shape: S): OptionalShape<S> {
  const out: Record<string, z.ZodType> = {};
  for (const [k, v] of Object.entries(shape)) {
    const inner = v instanceof z.ZodDefault ? (v.unwrap() as z.ZodType) : (v as z.ZodType);
    out[k] = inner.optional();
  }
  return out as OptionalShape<S>;
}

export const groupOverridesSchema = z
  .object(optionalShape(groupSettingsSchema.shape))
  .extend({
    replyPolicy: z.object(optionalShape(replyPolicySchema.shape)).strict().optional(),
    budget: z
      .object({
        ...optionalShape(budgetSchema.shape),
        addressed: z.object(optionalShape(budgetSchema.shape.addressed.unwrap().shape)).strict().optional(),
        unaddressed: z.object(optionalShape(budgetSchema.shape.unaddressed.unwrap().shape)).strict().optional(),
        orphan: z.object(optionalShape(budgetSchema.shape.orphan.unwrap().shape)).strict().optional(),
      })
      .strict()
      .optional(),
    orphans: z.object(optionalShape(orphansSchema.shape)).strict().optional(),
    dedup: z.object(optionalShape(dedupSchema.shape)).strict().optional(),
    delay: z.object(optionalShape(delaySchema.shape)).strict().optional(),
    cooldownScale: z.object(optionalShape(groupSettingsSchema.shape.cooldownScale.unwrap().shape)).strict().optional(),
  })
  .strict();
export type GroupOverrides = z.input<typeof groupOverridesSchema>;

const aidPattern = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9-]+)+$/;
const accessPointPattern = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$/;

// The identity's public profile (agent.md) on the ACP network: generated from these fields and the
// identity, or read from `file`. Combining `file` with `description`/`tags` is rejected at load.
export const profileSchema = z
  .object({
    publish: z.boolean().default(true).describe("Publish the identity's agent.md after sign-in (only when it changed)"),
    file: z.string().min(1).optional().describe("Publish this agent.md file (≤ 4 KB, YAML front matter) instead of a generated one"),
    description: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe("One-line description in the generated agent.md; default: the persona's first sentence"),
    tags: z.array(z.string().min(1).max(40)).max(20).optional().describe("Tags in the generated agent.md"),
  })
  .strict();
export type ProfileConfig = z.infer<typeof profileSchema>;

export const identitySchema = z
  .object({
    aid: z
      .string()
      .regex(aidPattern, "expected an agent id such as alice.agentcp.io")
      .describe("Agent id such as alice.agentcp.io; its user part (alice) and the full aid are mention keywords"),
    name: z.string().min(1).max(100).optional().describe("Display name; also a mention keyword"),
    aliases: z.array(z.string().min(1).max(100)).max(50).default([]).describe("More mention keywords"),
    identityDir: z
      .string()
      .min(1)
      .optional()
      .describe("Folder with private/<aid>.key and public/<aid>.crt; default <stateDir>/identities/<aid>"),
    keyFile: z.string().min(1).optional().describe("Private key PEM (with certFile, instead of identityDir)"),
    certFile: z.string().min(1).optional().describe("Certificate PEM (with keyFile, instead of identityDir)"),
    accessPoint: z
      .string()
      .regex(accessPointPattern, "expected an access point domain such as agentcp.io (optionally :port)")
      .optional()
      .describe("Access point domain; its URL is https://acp3.<domain>. Default: the part of aid after the first dot"),
    accessPointUrl: z
      .string()
      .regex(/^https?:\/\//, "expected an http:// or https:// URL")
      .optional()
      .describe("Access point base URL, instead of accessPoint (e.g. a local network)"),
    owner: z.string().optional().describe("aid of the human who owns this agent"),
    enabled: z.boolean().default(true).describe("false leaves the identity out"),
    persona: z.string().max(4000).optional().describe("Extra identity text placed in the stable system prompt"),
    profile: profileSchema.optional().describe("The identity's public agent.md on the ACP network"),
    groups: z
      .record(z.string().min(1), groupOverridesSchema)
      .default({})
      .describe("Group settings for this identity only, layered over the top-level groups (same keys)"),
    dmPolicy: dmPolicySchema,
    allowFrom: dmAllowFromSchema,
    denyFrom: dmDenyFromSchema,
    direct: directSchema.optional().describe("Direct messages: the limits that end an exchange, and the notice to refused senders"),
  })
  .strict()
  .superRefine((v, ctx) => {
    if ((v.keyFile === undefined) !== (v.certFile === undefined)) {
      ctx.addIssue({ code: "custom", path: [v.keyFile === undefined ? "keyFile" : "certFile"], message: "expected keyFile and certFile together" });
    }
    if (v.keyFile !== undefined && v.identityDir !== undefined) {
      ctx.addIssue({ code: "custom", path: ["identityDir"], message: "expected identityDir or keyFile/certFile, not both" });
    }
    if (v.accessPoint !== undefined && v.accessPointUrl !== undefined) {
      ctx.addIssue({ code: "custom", path: ["accessPointUrl"], message: "expected accessPoint or accessPointUrl, not both" });
    }
  });
export type IdentityConfig = z.infer<typeof identitySchema>;

export const llmSchema = z
  .object({
    baseUrl: z.string().url().optional().describe("OpenAI-compatible endpoint; else OPENAI_BASE_URL"),
    apiKey: z.string().optional().describe("Else OPENAI_API_KEY"),
    model: z.string().optional().describe("Else OPENAI_MODEL, else gpt-4o-mini"),
    timeoutMs: z.number().int().min(1000).max(600000).default(60000).describe("Per request; when streaming, also the longest gap between chunks"),
    maxRetries: z.number().int().min(0).max(10).default(2).describe("SDK retries on connection errors, timeouts, 408/409/429/5xx"),
    maxTokens: z.number().int().min(16).max(32000).default(400).describe("Completion tokens per call"),
    temperature: z.number().min(0).max(2).optional().describe("Sampling temperature; default the server's"),
    stream: z.boolean().default(false).describe("Stream replies (usage is still reported)"),
    historyTokenLimit: z
      .number()
      .int()
      .min(500)
      .max(1_000_000)
      .default(8000)
      .describe("Standalone conversation store: compress older turns above this"),
  })
  .strict();
export type LlmSettings = z.infer<typeof llmSchema>;

export const networkSchema = z
  .object({
    caFile: z.string().min(1).optional().describe("PEM of a private CA to trust besides the system roots (e.g. a local network's ca.crt)"),
    insecureTls: z.boolean().default(false).describe("Skip TLS certificate verification (logged at warn; never for the real network)"),
    presence: z
      .boolean()
      .default(true)
      .describe("UDP presence with the network's heartbeat_server, as the SDKs keep it (online status; invites can arrive through it); nothing runs when the network names none"),
    seedPassword: z
      .union([z.string().min(1), secretRefSchema])
      .optional()
      .describe("Unlocks encrypted identity keys: the text, or a reference { source: env|file|exec|store, provider, id } (in OpenClaw resolved by the gateway's secrets.providers); else ACP_SEED_PASSWORD"),
  })
  .strict();
export type NetworkSettings = z.infer<typeof networkSchema>;

export const channelConfigSchema = z
  .object({
    enabled: z.boolean().default(true).describe("OpenClaw: false turns the channel off for every account (start and createGroupAgent() ignore it)"),
    stateDir: z.string().optional().describe("Where per-group state is saved; default ~/.acp-group/state"),
    humans: z.array(z.string()).default([]).describe("Senders treated as humans (owners are always human)"),
    agents: z
      .array(z.string())
      .default([])
      .describe("Senders treated as agents, whatever the group service or their agent.md says"),
    identities: z.record(z.string().min(1), identitySchema).default({}).describe("Agent identities by id (the OpenClaw account id)"),
    network: networkSchema.default({ insecureTls: false, presence: true }).describe("TLS and key settings for the ACP network"),
    groups: z
      .record(z.string().min(1), groupOverridesSchema)
      .default({})
      .describe("Per-group settings by group id; \"*\" is the default for every group. A named group is joined by every identity"),
    llm: llmSchema.default(llmSchema.parse({})).describe("The model of standalone agents; unused under OpenClaw"),
    maxConcurrentDispatches: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(4)
      .describe("Model calls one identity runs at once across its groups; more wait their turn"),
    modelCallTimeoutMs: z
      .number()
      .int()
      .min(1000)
      .max(3_600_000)
      .default(180_000)
      .describe("A model call (or host turn) holding a slot longer than this is abandoned and retried with backoff"),
    logLevel: z.enum(["debug", "info", "warn", "error"]).default("info").describe("OpenClaw: level of the channel's structured log (the commands use --log-level)"),
  })
  .strict();
export type ChannelConfig = z.infer<typeof channelConfigSchema>;
export type ChannelConfigInput = z.input<typeof channelConfigSchema>;
