// The one source of truth for configuration: the code validates with these zod schemas, and the
// OpenClaw manifest's JSON Schema is generated from them (scripts/gen-manifest.ts; a test compares).
import { z } from "zod";

const ms = (max = 24 * 3600_000) => z.number().int().min(0).max(max);

export const VITALITY_STATES = ["DORMANT", "COOLING", "ACTIVE", "HEATED"] as const;
export const BUDGET_WINDOWS = ["5m", "3h", "24h"] as const;
export type BudgetWindowName = (typeof BUDGET_WINDOWS)[number];

const budgetWindow = z
  .object({
    messages: z.number().int().min(0).describe("Model calls allowed in the window"),
    tokens: z.number().int().min(0).describe("Tokens (prompt + completion) allowed in the window"),
  })
  .strict();

export const budgetSchema = z
  .object({
    enabled: z.boolean().default(true),
    windows: z
      .object({
        "5m": budgetWindow.default({ messages: 5, tokens: 2000 }),
        "3h": budgetWindow.default({ messages: 30, tokens: 30000 }),
        "24h": budgetWindow.default({ messages: 100, tokens: 100000 }),
      })
      .strict()
      .default({
        "5m": { messages: 5, tokens: 2000 },
        "3h": { messages: 30, tokens: 30000 },
        "24h": { messages: 100, tokens: 100000 },
      }),
    unaddressedShare: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe("Share of each window that unaddressed dispatches may use; the rest is kept for mentions"),
    mentionReserve: z
      .number()
      .int()
      .min(0)
      .default(2)
      .describe("Extra model calls per window kept for mentions once the budget is used up"),
  })
  .strict();

export const replyPolicySchema = z
  .object({
    allowLong: z.boolean().default(false).describe("Allow reply_type=long in calm groups"),
    maxCharsPerMessage: z.number().int().min(20).max(10000).default(500),
    noMarkdown: z.boolean().default(true),
    maxReactionChars: z.number().int().min(1).max(32).default(8),
    shortSentences: z.number().int().min(1).max(5).default(2),
    normalSentences: z.number().int().min(1).max(20).default(5),
    tailMark: z.string().max(20).default("…"),
  })
  .strict();

export const dedupSchema = z
  .object({
    historySize: z.number().int().min(1).max(100).default(10),
    similarityThreshold: z.number().min(0).max(1).default(0.8),
    action: z.enum(["skip", "reaction"]).default("skip"),
  })
  .strict();

const range = z.tuple([ms(), ms()]).refine(([a, b]) => a <= b, "expected [min, max] with min ≤ max");

export const delaySchema = z
  .object({
    enabled: z.boolean().default(true),
    fastMs: range.default([2000, 6000]),
    normalMs: range.default([8000, 20000]),
    slowMs: range.default([20000, 60000]),
    onMention: z.boolean().default(false).describe("Also delay replies to mentions"),
  })
  .strict();

export const groupSettingsSchema = z
  .object({
    enabled: z.boolean().default(true),
    subject: z.string().max(200).optional().describe("Group name/topic shown to the model"),
    bufferGateMs: ms(600_000).default(3000).describe("Trailing debounce before unaddressed talk is handed over"),
    bufferGateMaxWaitMs: ms(3600_000).default(15000).describe("A message never waits in the buffer longer than this"),
    cooldownMs: ms(3600_000).default(30000).describe("Quiet time after a dispatch ends before the next unaddressed one"),
    cooldownScale: z
      .object({
        DORMANT: z.number().min(0).max(100).default(1),
        COOLING: z.number().min(0).max(100).default(1),
        ACTIVE: z.number().min(0).max(100).default(1),
        HEATED: z.number().min(0).max(100).default(2),
      })
      .strict()
      .default({ DORMANT: 1, COOLING: 1, ACTIVE: 1, HEATED: 2 }),
    mentionMinIntervalMs: ms(3600_000).default(0),
    mentionMatch: z.enum(["smart", "substring"]).default("smart"),
    engagedWindowMs: ms(3600_000).default(60000),
    engagedFollowUpMs: ms(600_000).default(5000),
    vitalityWindowMs: ms(3600_000).default(300000),
    vitalityMaxEvents: z.number().int().min(1).max(10000).default(200),
    maxPendingMessages: z
      .number()
      .int()
      .min(1)
      .max(100000)
      .default(500)
      .describe("Messages held before the oldest are dropped as over-capacity"),
    maxRetries: z.number().int().min(0).max(10).default(2),
    retryBackoffMs: ms(600_000).default(2000),
    contextFormat: z.enum(["lines", "xml"]).default("lines"),
    maxInboundChars: z.number().int().min(20).max(100000).default(1000),
    gapThresholdMs: ms().default(600000).describe("xml format: gaps longer than this get a <g/> mark"),
    decision: z.enum(["single", "two-phase"]).default("single"),
    maxAgentChain: z.number().int().min(1).max(1000).default(6),
    replyPolicy: replyPolicySchema.default(replyPolicySchema.parse({})),
    budget: budgetSchema.default(budgetSchema.parse({})),
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
        windows: z.object(optionalShape(budgetSchema.shape.windows.unwrap().shape)).strict().optional(),
      })
      .strict()
      .optional(),
    dedup: z.object(optionalShape(dedupSchema.shape)).strict().optional(),
    delay: z.object(optionalShape(delaySchema.shape)).strict().optional(),
    cooldownScale: z.object(optionalShape(groupSettingsSchema.shape.cooldownScale.unwrap().shape)).strict().optional(),
  })
  .strict();
export type GroupOverrides = z.input<typeof groupOverridesSchema>;

const aidPattern = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9-]+)+$/;

export const identitySchema = z
  .object({
    aid: z.string().regex(aidPattern, "expected an agent id such as alice.agentcp.io"),
    name: z.string().min(1).max(100).optional().describe("Display name; also a mention keyword"),
    aliases: z.array(z.string().min(1).max(100)).max(50).default([]),
    token: z.string().min(1).optional().describe("Credential for the group server"),
    owner: z.string().optional().describe("aid of the human who owns this agent"),
    enabled: z.boolean().default(true),
    persona: z.string().max(4000).optional().describe("Extra identity text placed in the stable system prompt"),
    groups: z.record(z.string().min(1), groupOverridesSchema).default({}),
  })
  .strict();
export type IdentityConfig = z.infer<typeof identitySchema>;

export const llmSchema = z
  .object({
    baseUrl: z.string().url().optional().describe("OpenAI-compatible endpoint; else OPENAI_BASE_URL"),
    apiKey: z.string().optional().describe("Else OPENAI_API_KEY"),
    model: z.string().optional().describe("Else OPENAI_MODEL, else gpt-4o-mini"),
    timeoutMs: z.number().int().min(1000).max(600000).default(60000),
    maxRetries: z.number().int().min(0).max(10).default(2),
    maxTokens: z.number().int().min(16).max(32000).default(400),
    temperature: z.number().min(0).max(2).optional(),
    stream: z.boolean().default(false),
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

export const channelConfigSchema = z
  .object({
    enabled: z.boolean().default(true),
    serverUrl: z.string().regex(/^wss?:\/\//, "expected a ws:// or wss:// URL").optional(),
    stateDir: z.string().optional().describe("Where per-group state is saved; default ~/.acp-group/state"),
    humans: z.array(z.string()).default([]).describe("Senders treated as humans (owners are always human)"),
    identities: z.record(z.string().min(1), identitySchema).default({}),
    groups: z.record(z.string().min(1), groupOverridesSchema).default({}),
    llm: llmSchema.default(llmSchema.parse({})),
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
    logLevel: z.enum(["debug", "info", "warn", "error"]).default("info"),
  })
  .strict();
export type ChannelConfig = z.infer<typeof channelConfigSchema>;
export type ChannelConfigInput = z.input<typeof channelConfigSchema>;
