// The model settings of the standalone back-end, resolved once: the config first, then the
// `OPENAI_*` environment variables, then defaults, remembering where each value came from.
import type { LlmSettings } from "../types.ts";

export const DEFAULT_MODEL = "gpt-4o-mini";

type Source = "config" | "env" | "default" | "none";

export interface ResolvedLlmSettings {
  baseUrl?: string;
  apiKey?: string;
  model: string;
  /** True when there is something to talk to: an API key, or an explicit base URL (local servers often need no key). */
  configured: boolean;
  /** Where each value came from, for the one-line startup notice. Never the key itself. */
  sources: { baseUrl: Source; apiKey: Source; model: Source };
  timeoutMs: number;
  maxRetries: number;
  maxTokens: number;
  temperature?: number;
  stream: boolean;
  historyTokenLimit: number;
}

const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() ? v.trim() : undefined);

/** Config wins over `OPENAI_BASE_URL` / `OPENAI_API_KEY` / `OPENAI_MODEL`; model defaults to gpt-4o-mini. */
export function resolveLlmSettings(llm: LlmSettings, env: NodeJS.ProcessEnv = process.env): ResolvedLlmSettings {
  const pick = (fromConfig: string | undefined, envName: string): [string | undefined, Source] => {
    const c = nonEmpty(fromConfig);
    if (c) return [c, "config"];
    const e = nonEmpty(env[envName]);
    return e ? [e, "env"] : [undefined, "none"];
  };
  const [baseUrl, baseSrc] = pick(llm.baseUrl, "OPENAI_BASE_URL");
  const [apiKey, keySrc] = pick(llm.apiKey, "OPENAI_API_KEY");
  const [model, modelSrc] = pick(llm.model, "OPENAI_MODEL");
  return {
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    model: model ?? DEFAULT_MODEL,
    configured: Boolean(apiKey || baseUrl),
    sources: { baseUrl: baseSrc, apiKey: keySrc, model: model ? modelSrc : "default" },
    timeoutMs: llm.timeoutMs,
    maxRetries: llm.maxRetries,
    maxTokens: llm.maxTokens,
    ...(llm.temperature !== undefined ? { temperature: llm.temperature } : {}),
    stream: llm.stream,
    historyTokenLimit: llm.historyTokenLimit,
  };
}
