// The package's public surface for standalone use (no host): run an identity (`createGroupAgent`,
// `startIdentity`), read its configuration, pick a model back-end, and the types these take and
// return. The OpenClaw plugin entry lives in src/plugin.ts (package export "./openclaw" and
// `openclaw.extensions`): it imports the host SDK, an optional peer, so this file must not —
// `import { createGroupAgent } from "acp-group-channel"` works without OpenClaw installed. The
// engine's parts (group client, monitor, transport, network, local server) are not part of it.
import { parseChannelConfig } from "./config/load.ts";
import { createConversationRegistry } from "./backends/conversation-registry.ts";
import { createOpenAIBackend } from "./backends/standalone.ts";
import { startIdentity, type RunningIdentity, type StartIdentityParams } from "./runtime/identity.ts";
import { createFileStateStore, defaultStateDir } from "./state/file-store.ts";
import type { AgentBackend, ChannelConfig, Logger } from "./types.ts";

export type * from "./types.ts";
export type { ChannelConfigInput, GroupOverrides } from "./config/schema.ts";
export { ConfigError, parseChannelConfig, loadConfigFile } from "./config/load.ts";
export { startIdentity, RuntimeError, type RunningIdentity, type StartIdentityParams } from "./runtime/identity.ts";
export type { DirectOptions, DirectRuntime } from "./runtime/direct.ts";
export { NetworkError } from "./network/index.ts";
export { createOpenAIBackend } from "./backends/standalone.ts";
export { createScriptedBackend, type ScriptedBackendParams, type ScriptedMode } from "./backends/deterministic.ts";
export { LlmError } from "./backends/llm-error.ts";
export type { StateStore } from "./state/file-store.ts";
export type { DispatchDecision, GroupMonitor } from "./monitor/monitor.ts";
export type { GroupClient, GroupClientEvent, GroupClientStats } from "./group/group-client.ts";
export interface CreateGroupAgentParams {
  /** A channel config object (validated here) or an already parsed one. */
  config: unknown;
  /** Which identity to run; default the only (or first) one configured. */
  identityId?: string;
  /** Default: the `openai` SDK back-end from `config.llm` / OPENAI_* environment variables. */
  backend?: AgentBackend;
  logger?: Logger;
  abortSignal?: AbortSignal;
  onDecision?: StartIdentityParams["onDecision"];
}

/**
 * Runs one identity standalone: signs its key in to its access point, opens the session with
 * `group.<ap>`, joins its groups and answers through an OpenAI-compatible model. Close it (or
 * abort the signal) to stop and save state.
 */
export function createGroupAgent(p: CreateGroupAgentParams): RunningIdentity {
  const config: ChannelConfig = parseChannelConfig(p.config);
  const identityId = p.identityId ?? Object.keys(config.identities)[0];
  if (identityId === undefined) throw new Error("config.identities: configure at least one identity");
  const store = createFileStateStore({ dir: config.stateDir ?? defaultStateDir(), ...(p.logger ? { logger: p.logger } : {}) });
  let backend = p.backend;
  if (!backend) {
    const conversations = createConversationRegistry({
      historyTokenLimit: config.llm.historyTokenLimit,
      persistence: store,
      ...(p.logger ? { logger: p.logger } : {}),
    });
    backend = createOpenAIBackend({ llm: config.llm, ...(p.logger ? { logger: p.logger } : {}), conversations });
  }
  return startIdentity({
    config,
    identityId,
    backend,
    store,
    ...(p.logger ? { logger: p.logger } : {}),
    ...(p.abortSignal ? { abortSignal: p.abortSignal } : {}),
    ...(p.onDecision ? { onDecision: p.onDecision } : {}),
  });
}
