// The shape of a standalone conversation: its entries (with their tags and, for a summary, what
// it stands for), the chat messages sent to the model, and the serialized form with its schema.
import { z } from "zod";
import type { Usage } from "../types.ts";

/** What a summary entry stands for, kept structured so a later summary can absorb it. */
export interface SummaryInfo {
  fromTurn: number;
  toTurn: number;
  turns: number;
  messages: number;
  senders: string[];
  triggers: Record<string, number>;
  replies: number;
  /** Our latest replies (newest last), shortened — so the model does not repeat itself. */
  recentReplies: string[];
}

export type ConversationTags = Readonly<Record<string, string | number>>;

export interface ConversationEntry {
  role: "system" | "user" | "assistant";
  content: string;
  /** 0 for the system message; the turn (one dispatch) an entry belongs to otherwise. */
  turn: number;
  tags: ConversationTags;
  /** User entries: who spoke in the batch and how many messages it had. */
  senders?: string[];
  messageCount?: number;
  /** Assistant entries. */
  usage?: Usage;
  model?: string;
  /** An assistant entry the group never saw (tag `unsent`): what the model wrote. Never sent to the model. */
  draft?: string;
  summary?: SummaryInfo;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface SerializedConversation {
  version: 1;
  nextTurn: number;
  entries: ConversationEntry[];
}

const usageSchema = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  cachedTokens: z.number().optional(),
});

const summarySchema = z.object({
  fromTurn: z.number().int(),
  toTurn: z.number().int(),
  turns: z.number().int().min(0),
  messages: z.number().int().min(0),
  senders: z.array(z.string()),
  triggers: z.record(z.string(), z.number()),
  replies: z.number().int().min(0),
  recentReplies: z.array(z.string()),
});

const entrySchema = z.object({
  role: z.enum(["system", "user", "assistant"]),
  content: z.string(),
  turn: z.number().int().min(0),
  tags: z.record(z.string(), z.union([z.string(), z.number()])),
  senders: z.array(z.string()).optional(),
  messageCount: z.number().int().min(0).optional(),
  usage: usageSchema.optional(),
  model: z.string().optional(),
  draft: z.string().optional(),
  summary: summarySchema.optional(),
});

/** A stored conversation as read back: exactly one system message, first. */
export const serializedSchema = z.object({
  version: z.literal(1),
  nextTurn: z.number().int().min(1),
  entries: z
    .array(entrySchema)
    .min(1)
    .refine((es) => es[0]?.role === "system" && es.slice(1).every((e) => e.role !== "system"), {
      message: "expected exactly one system message, first",
    }),
});
