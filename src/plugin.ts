// The OpenClaw plugin entry (package.json `openclaw.extensions`). The only module besides
// src/openclaw/host-calls.ts that touches the host: it imports the SDK helpers at runtime, so import
// it only inside the host. Standalone users never load this file.
import {
  createChannelPluginBase,
  createChatChannelPlugin,
  defineChannelPluginEntry,
  type ChannelPlugin,
  type OpenClawConfig,
  type PluginRuntime,
} from "openclaw/plugin-sdk/channel-core";
import { defineChannelSetupContract } from "openclaw/plugin-sdk/channel-setup";
import { resolveGroupSettings } from "./config/load.ts";
import { ACP_GROUP_SETUP_FIELDS, applyAcpGroupSetup, prepareAcpGroupSetup, validateAcpGroupSetup } from "./openclaw/setup.ts";
import { createAcpGroupSetupWizard } from "./openclaw/setup-wizard.ts";
import { createJsonLogger } from "./log.ts";
import {
  ACP_GROUP_CHANNEL_ID,
  ACP_GROUP_CHANNEL_META,
  OpenClawHostError,
  createOpenClawBackend,
  type OpenClawInboundContext,
} from "./openclaw/host-calls.ts";
import {
  createAcpGroupChannelAdapters,
  defaultAcpGroupAccountId,
  describeAcpGroupAccount,
  isAcpGroupAccountEnabled,
  listAcpGroupAccountIds,
  resolveAcpGroupAccount,
  type AcpGroupAccount,
} from "./openclaw/channel.ts";
import { startIdentity } from "./runtime/identity.ts";
import {
  checkIdentityHealth,
  collectAcpGroupDoctorWarnings,
  collectAcpGroupSecurityWarnings,
  listAcpGroupGroups,
  listAcpGroupPeers,
  inferAcpGroupTargetChatType,
  looksLikeAcpGroupTargetId,
  normalizeAcpGroupTarget,
  resolveAcpGroupToolPolicy,
} from "./openclaw/admin.ts";
import { collectAcpGroupNetworkWarnings } from "./openclaw/doctor.ts";
import { createHostDirectPairing, normalizeAcpGroupAllowEntry, OPENCLAW_DEFAULT_DM_POLICY, resolveAcpGroupDmSecurity } from "./openclaw/pairing.ts";
import { resolveHostStateDir } from "./openclaw/host-calls.ts";

type HostChannelRuntime = PluginRuntime["channel"];
type HostMsgContext = Parameters<HostChannelRuntime["session"]["recordInboundSession"]>[0]["ctx"];
// Compile-time proof that the context we build is a valid host MsgContext, field by field
// (finalizeInboundContext's generic return would otherwise hide a mismatched field type).
type FitsHost<T extends HostMsgContext> = T;
export type AcpGroupInboundContext = FitsHost<OpenClawInboundContext>;

// Set by the host when it registers the plugin; the gateway context may carry the same surface.
let pluginRuntime: PluginRuntime | undefined;

const hostChannelRuntime = (channelRuntime: unknown): HostChannelRuntime | undefined => pluginRuntime?.channel ?? (channelRuntime as HostChannelRuntime | undefined);

const adapters = createAcpGroupChannelAdapters<OpenClawConfig>({
  startIdentity,
  getPluginRuntime: () => pluginRuntime,
  // Direct messages follow the host's rules: its default policy, its pairing codes and approvals.
  directOptions: ({ channelRuntime, logger }) => ({
    defaultPolicy: OPENCLAW_DEFAULT_DM_POLICY,
    pairing: createHostDirectPairing({ runtime: () => hostChannelRuntime(channelRuntime)?.pairing, logger }),
  }),
  createBackend: ({ cfg, accountId, config, identity, channelRuntime, logger }) => {
    const runtime = hostChannelRuntime(channelRuntime);
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
      owner: identity.owner,
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
  capabilities: { chatTypes: ["direct", "group"], reactions: false, media: false, blockStreaming: false },
  reload: { configPrefixes: [`channels.${ACP_GROUP_CHANNEL_ID}`] },
  config,
  // Our own buffer/mention/loop gate decides which batches reach the agent, so the host treats
  // every turn we hand it as addressed ("always-on" in its group prompt) and never re-gates it.
  // Tools: a group where anyone may talk gets none unless its `tools` says so (docs/openclaw.md).
  groups: {
    resolveRequireMention: () => false,
    resolveToolPolicy: ({ cfg, groupId, accountId }) => resolveAcpGroupToolPolicy({ cfg, groupId: groupId ?? null, accountId: accountId ?? null }),
  },
});

const stateDirOf = (account: AcpGroupAccount): string => account.config?.stateDir ?? resolveHostStateDir(pluginRuntime);

/** `channels status --probe`: the key and certificate on disk, and what the running identity saw. */
async function probeAccount({ account }: { account: AcpGroupAccount }) {
  const live = adapters.liveStatus(account.accountId)?.snapshot();
  if (!account.config || !account.identity) return { ok: false, error: account.error?.issues.join("; ") ?? "not configured" };
  const health = checkIdentityHealth({ accountId: account.accountId, identity: account.identity, config: account.config, stateDir: stateDirOf(account), now: Date.now() });
  const why = health.key !== "ok" ? health.keyDetail : health.certificate?.reason === "expired" ? `certificate expired on ${health.certificate.validTo}` : live?.lastError ?? (live ? undefined : "not running in this gateway");
  return {
    ok: health.key === "ok" && health.certificate?.reason !== "expired" && live?.signedIn === true,
    aid: health.aid,
    accessPointUrl: health.accessPointUrl,
    signedIn: live?.signedIn ?? false,
    ...(why ? { why } : {}),
    key: health.key,
    ...(health.certificate ? { certificate: health.certificate } : {}),
    // `pending`: other members cannot tell it is an agent until its agent.md is published (retried).
    profile: live?.profile ?? null,
    groups: live?.groups ?? [],
    lastInboundAt: live?.lastInboundAt ?? null,
    lastOutboundAt: live?.lastOutboundAt ?? null,
  };
}

const status: NonNullable<ChannelPlugin<AcpGroupAccount>["status"]> = {
  probeAccount,
  buildAccountSnapshot: ({ account, runtime, probe }) => {
    const live = adapters.liveStatus(account.accountId)?.snapshot();
    const described = describeAcpGroupAccount(account);
    return {
      ...runtime,
      accountId: account.accountId,
      ...(described.name ? { name: described.name } : {}),
      enabled: described.enabled,
      configured: described.configured,
      ...(account.identity ? { identity: account.identity.aid } : {}),
      ...(described.baseUrl ? { baseUrl: described.baseUrl } : {}),
      ...(live ? { connected: live.signedIn, lastInboundAt: live.lastInboundAt, lastOutboundAt: live.lastOutboundAt } : {}),
      lastError: live?.lastError ?? runtime?.lastError ?? described.lastError,
      ...(probe !== undefined ? { probe } : {}),
    };
  },
  buildChannelSummary: ({ snapshot }) => ({ identity: snapshot.identity ?? null, signedIn: snapshot.connected === true, lastError: snapshot.lastError ?? null }),
};

// `openclaw channels add --channel acp-group --aid … --join <link>`: identity, join, config.
const setupContract = defineChannelSetupContract({
  fields: ACP_GROUP_SETUP_FIELDS,
  adapter: {
    validateInput: ({ cfg, accountId, input }) => validateAcpGroupSetup(input, cfg, accountId),
    prepareAccountConfigInput: ({ cfg, accountId, input }) =>
      prepareAcpGroupSetup({ cfg, accountId, input, defaultStateDir: resolveHostStateDir(pluginRuntime), logger: createJsonLogger({ level: "warn" }) }),
    applyAccountConfig: ({ cfg, accountId, input }) => applyAcpGroupSetup({ cfg, accountId, input }),
  },
});

// `openclaw channels add` on a terminal without flags, and `openclaw onboard`: the same fields, asked.
const setupWizard = createAcpGroupSetupWizard({ defaultStateDir: () => resolveHostStateDir(pluginRuntime), logger: createJsonLogger({ level: "warn" }) });

export const acpGroupChannelPlugin: ChannelPlugin<AcpGroupAccount> = createChatChannelPlugin<AcpGroupAccount>({
  base: {
    ...base,
    config,
    gateway: adapters.gateway,
    setupContract,
    setupWizard,
    status,
    doctor: {
      // Files first (key, certificate, groups), then the network (access point reachable, clock).
      collectPreviewWarnings: async ({ cfg, env }) => {
        const section = resolveAcpGroupAccount(cfg).config;
        const offline = collectAcpGroupDoctorWarnings({ cfg, stateDir: section?.stateDir ?? resolveHostStateDir(pluginRuntime, env ?? process.env), ...(env ? { env } : {}), now: Date.now() });
        return [...offline, ...(await collectAcpGroupNetworkWarnings({ cfg, now: Date.now }))];
      },
    },
    security: {
      // `openclaw security audit`: each identity's DM policy (critical when open), as for the bundled channels.
      resolveDmPolicy: ({ account }) => resolveAcpGroupDmSecurity(account),
      collectWarnings: ({ cfg, accountId, account }) => collectAcpGroupSecurityWarnings({ cfg, accountId: accountId ?? account.accountId }),
    },
    messaging: {
      targetPrefixes: [ACP_GROUP_CHANNEL_ID],
      normalizeTarget: normalizeAcpGroupTarget,
      // An aid (`acp-group:alice.agentcp.io`) is a direct target as given, not a directory name.
      inferTargetChatType: ({ to }) => inferAcpGroupTargetChatType(to),
      targetResolver: { looksLikeId: (raw) => looksLikeAcpGroupTargetId(raw), hint: "group:<group id> for a group, or an agent id (name.domain) for a direct message" },
    },
    directory: {
      listGroups: async ({ cfg, accountId, query, limit }) => {
        const id = accountId ?? defaultAcpGroupAccountId(cfg);
        return listAcpGroupGroups({ cfg, accountId: id, running: adapters.runningDirectory(id)?.groups ?? [], query: query ?? null, limit: limit ?? null });
      },
      listPeers: async ({ cfg, accountId, query, limit }) => {
        const id = accountId ?? defaultAcpGroupAccountId(cfg);
        return listAcpGroupPeers({ cfg, accountId: id, known: adapters.runningDirectory(id)?.members ?? [], query: query ?? null, limit: limit ?? null });
      },
    },
  },
  // `openclaw pairing list|approve acp-group …`: the host's own pairing of direct-message senders.
  pairing: {
    text: {
      idLabel: "ACP agent id",
      message: "Your pairing was approved: you can message this agent now.",
      normalizeAllowEntry: normalizeAcpGroupAllowEntry,
      // `--notify` runs in the command's process, where no identity is signed in: the approved
      // sender is answered from their next message, and the command says so.
      notify: ({ id, runtime }) => {
        const line = `acp-group: ${id} is approved and will be answered from their next message (the identity runs in the gateway; the command cannot write to them).`;
        if (runtime) runtime.log(line);
        else console.log(line);
      },
    },
  },
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
