// The OpenClaw plugin entry (package.json `openclaw.extensions`). The only module besides
// src/host/openclaw.ts that touches the host: it imports the SDK helpers at runtime, so import
// it only inside the host. Standalone users never load this file.
import {
  createChannelPluginBase,
  createChatChannelPlugin,
  defineChannelPluginEntry,
  type ChannelPlugin,
  type OpenClawConfig,
  type PluginRuntime,
} from "openclaw/plugin-sdk/channel-core";
import { resolveGroupSettings } from "./config/load.ts";
import {
  ACP_GROUP_CHANNEL_ID,
  ACP_GROUP_CHANNEL_META,
  OpenClawHostError,
  createOpenClawBackend,
  type OpenClawInboundContext,
} from "./host/openclaw.ts";
import {
  createAcpGroupChannelAdapters,
  defaultAcpGroupAccountId,
  describeAcpGroupAccount,
  isAcpGroupAccountEnabled,
  listAcpGroupAccountIds,
  resolveAcpGroupAccount,
  type AcpGroupAccount,
} from "./host/openclaw-channel.ts";
import { startIdentity } from "./runtime.ts";

type HostChannelRuntime = PluginRuntime["channel"];
type HostMsgContext = Parameters<HostChannelRuntime["session"]["recordInboundSession"]>[0]["ctx"];
// Compile-time proof that the context we build is a valid host MsgContext, field by field
// (finalizeInboundContext's generic return would otherwise hide a mismatched field type).
type FitsHost<T extends HostMsgContext> = T;
export type AcpGroupInboundContext = FitsHost<OpenClawInboundContext>;

// Set by the host when it registers the plugin; the gateway context may carry the same surface.
let pluginRuntime: PluginRuntime | undefined;

const adapters = createAcpGroupChannelAdapters<OpenClawConfig>({
  startIdentity,
  getPluginRuntime: () => pluginRuntime,
  createBackend: ({ cfg, accountId, config, identity, channelRuntime, logger }) => {
    const runtime = pluginRuntime?.channel ?? (channelRuntime as HostChannelRuntime | undefined);
    if (!runtime) {
      throw new OpenClawHostError({ code: "HOST_RUNTIME_MISSING", message: "the host gave no channel runtime", identityId: accountId });
    }
    return createOpenClawBackend<OpenClawConfig, HostMsgContext>({
      runtime,
      cfg,
      accountId,
      ...(cfg.session?.store ? { sessionStore: cfg.session.store } : {}),
      channelId: ACP_GROUP_CHANNEL_ID,
      resolveGroupSubject: (groupId) => resolveGroupSettings(config, identity, groupId).subject,
      logger,
    });
  },
});

// Accounts are our identities (channels.acp-group.identities.<id>).
const config: ChannelPlugin<AcpGroupAccount>["config"] = {
  listAccountIds: (cfg) => listAcpGroupAccountIds(cfg),
  resolveAccount: (cfg, accountId) => resolveAcpGroupAccount(cfg, accountId),
  defaultAccountId: (cfg) => defaultAcpGroupAccountId(cfg),
  isEnabled: (account) => isAcpGroupAccountEnabled(account),
  isConfigured: (account) => account.error === null,
  unconfiguredReason: (account) => account.error?.issues.join("; ") ?? "",
  describeAccount: (account) => describeAcpGroupAccount(account),
};

const base = createChannelPluginBase<AcpGroupAccount>({
  id: ACP_GROUP_CHANNEL_ID,
  meta: { ...ACP_GROUP_CHANNEL_META, markdownCapable: false },
  capabilities: { chatTypes: ["group"], reactions: false, media: false, blockStreaming: false },
  reload: { configPrefixes: [`channels.${ACP_GROUP_CHANNEL_ID}`] },
  config,
  // Our own buffer/mention/loop gate decides which batches reach the agent, so the host treats
  // every turn we hand it as addressed ("always-on" in its group prompt) and never re-gates it.
  groups: { resolveRequireMention: () => false },
});

export const acpGroupChannelPlugin: ChannelPlugin<AcpGroupAccount> = createChatChannelPlugin<AcpGroupAccount>({
  base: { ...base, config, gateway: adapters.gateway },
  outbound: adapters.outbound,
});

export default defineChannelPluginEntry({
  id: ACP_GROUP_CHANNEL_ID,
  name: ACP_GROUP_CHANNEL_META.label,
  description: ACP_GROUP_CHANNEL_META.blurb,
  plugin: acpGroupChannelPlugin,
  setRuntime: (runtime) => {
    pluginRuntime = runtime;
  },
});
