// The package's public surface for standalone use (no host). The OpenClaw plugin entry lives in
// src/plugin.ts (package export "./openclaw" and `openclaw.extensions`): it imports the host SDK,
// an optional peer, so this file must not — `import { createGroupAgent } from "acp-group-channel"`
// works without OpenClaw installed.
import { parseChannelConfig } from "./config/load.ts";
import { createConversationRegistry } from "./backends/conversation-registry.ts";
import { createOpenAIBackend } from "./backends/standalone.ts";
import { startIdentity, type RunningIdentity, type StartIdentityParams } from "./runtime/identity.ts";
import { createFileStateStore, defaultStateDir } from "./state/file-store.ts";
import type { AgentBackend, ChannelConfig, Logger } from "./types.ts";

export type * from "./types.ts";
export type { ChannelConfigInput, GroupOverrides } from "./config/schema.ts";
export { ConfigError, parseChannelConfig, loadConfigFile, resolveGroupSettings, listGroupsForIdentity, DEFAULT_GROUP_SETTINGS } from "./config/load.ts";
export { channelConfigSchema } from "./config/schema.ts";
export { startIdentity, RuntimeError, type RunningIdentity, type StartIdentityParams } from "./runtime/identity.ts";
export { initGroupClientForIdentity, closeGroupClientForIdentity } from "./group/group-client.ts";
export type { GroupClient, GroupClientEvent, GroupClientParams, GroupClientStats } from "./group/group-client.ts";
export { buildMentionKeywords, checkMention } from "./group/mention.ts";
export { computeVitality } from "./group/vitality.ts";
export { createGroupMonitor, handleGroupMessagesForIdentity, type GroupMonitor, type DispatchDecision } from "./monitor/monitor.ts";
export { buildAcpSystemPrompt, buildGroupSituationPrompt, formatMessages } from "./monitor/prompt.ts";
export { createOpenAIBackend } from "./backends/standalone.ts";
export { resolveLlmSettings } from "./backends/llm-settings.ts";
export { LlmError } from "./backends/llm-error.ts";
export { createScriptedBackend } from "./backends/deterministic.ts";
export { createGroupConnection } from "./transport/connection.ts";
export type { GroupConnection, GroupConnectionParams } from "./transport/connection.ts";
export { createGroupService, type GroupService, type GroupServiceOptions } from "./server/group-service.ts";
export {
  connectAgent,
  createIdentity,
  ensureIdentity,
  loadIdentity,
  importIdentity,
  listIdentities,
  accessPointUrlFor,
  groupServiceAid,
  warnExpiringCertificates,
  NetworkError,
  type Identity,
  type NetworkAgent,
  type ConnectAgentOptions,
  type TlsOptions,
} from "./network/index.ts";
export { startLocalNetwork, networkBanner, type LocalNetwork, type LocalNetworkOptions } from "./server/network/index.ts";
export { createFileStateStore, defaultStateDir, type StateStore } from "./state/file-store.ts";
export { createJsonLogger } from "./log.ts";

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
