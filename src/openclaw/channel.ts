// The adapters the OpenClaw host calls into: accounts (= our identities), the gateway that runs
// one identity per account, and outbound sends. Host-agnostic: the composition root (src/plugin.ts)
// supplies `startIdentity` and the backend factory, so this file runs and tests without the host.
import type { AgentBackend, ChannelConfig, DirectPairing, DmPolicy, GroupMessage, IdentityConfig, Logger } from "../types.ts";
import type { DispatchDecision } from "../monitor/decision.ts";
import type { GroupClientEvent } from "../group/group-client.ts";
import { createAccountLiveStatus, type AccountLiveStatus } from "./status.ts";
import { cleanOutboundText } from "../monitor/outbound.ts";
import { evolRunsAid } from "../config/evol-config.ts";
import { ConfigError, parseChannelConfig } from "../config/load.ts";
import { childLogger, createJsonLogger, errorFields } from "../log.ts";
import { accessPointUrlFor } from "../network/access-point.ts";
import {
  ACP_GROUP_CHANNEL_ID,
  createHostLogger,
  parseAcpGroupTarget,
  resolveHostStateDir,
  type OpenClawLogSink,
  type OpenClawPluginRuntimeLike,
} from "./host-calls.ts";

const CONFIG_PATH = `channels.${ACP_GROUP_CHANNEL_ID}`;

/** One account of the channel = one configured identity, validated once at resolve time. */
export type AcpGroupAccount = {
  accountId: string;
  config: ChannelConfig | null;
  identity: IdentityConfig | null;
  /** Why this account cannot start, with config paths (`channels.acp-group.identities.bot.aid: …`). */
  error: ConfigError | null;
};

/**
 * What the composition root (src/runtime/identity.ts `startIdentity`) offers, as far as the host needs it.
 * `done` settles once `abortSignal` has fired and every group is closed and its state saved.
 */
export type StartIdentityParams = {
  /** With `stateDir` filled in (the host's state dir unless configured). */
  config: ChannelConfig;
  identityId: string;
  backend: AgentBackend;
  logger: Logger;
  abortSignal: AbortSignal;
  /** Observers for the account's status (src/openclaw/status.ts). */
  onMessages?: (groupId: string, messages: readonly GroupMessage[]) => void;
  onDecision?: (decision: DispatchDecision) => void;
  onGroupEvent?: (groupId: string, event: GroupClientEvent) => void;
  /** Direct messages inside the host: its default policy (pairing) and its pairing flow. */
  direct?: AcpGroupDirectOptions;
};
/** How the host runs an identity's direct messages (src/runtime/direct.ts DirectOptions, as far as the host sets it). */
export type AcpGroupDirectOptions = { defaultPolicy?: DmPolicy; pairing?: DirectPairing };
export type RunningIdentity = {
  readonly done: Promise<void>;
  /** Resolves once signed in and every group's backlog is pulled; rejects when sign-in is refused. */
  readonly ready?: Promise<void>;
  readonly groups?: readonly string[];
  /** Who is a human or an agent as this identity knows it; `known()` lists them (the host's directory). */
  readonly memberTypes?: object;
  /** The group connection's state (`open`, `reconnecting`, …) for one group. */
  connectionFor?(groupId: string): { readonly status: string } | undefined;
  sendText(groupId: string, text: string): Promise<{ msgId: string; timestamp: number }>;
  /** Writes to `peer` directly: on the peer's session, or a new one (created, the peer invited). */
  sendDirect?(peer: string, text: string): Promise<{ sessionId: string }>;
};
export type StartIdentity = (params: StartIdentityParams) => RunningIdentity;

/** The slice of the host's gateway context we use (ChannelGatewayContext in the host). */
export type AcpGroupGatewayContext<Cfg> = {
  cfg: Cfg;
  accountId: string;
  account: AcpGroupAccount;
  abortSignal: AbortSignal;
  log?: OpenClawLogSink;
  channelRuntime?: unknown;
  getStatus: () => { accountId: string };
  setStatus: (next: AcpGroupStatus) => void;
};
export type AcpGroupStatus = {
  accountId: string;
  running?: boolean;
  connected?: boolean;
  lastConnectedAt?: number | null;
  configured?: boolean;
  lastStartAt?: number | null;
  lastStopAt?: number | null;
  lastError?: string | null;
};

export type OutboundErrorCode = "ACCOUNT_NOT_RUNNING" | "INVALID_TARGET" | "EMPTY_TEXT" | "NO_DIRECT_MESSAGES";

/** An outbound send the host asked for could not be made. */
export class AcpGroupOutboundError extends Error {
  readonly code: OutboundErrorCode;
  readonly accountId: string | undefined;
  readonly to: string;
  constructor(code: OutboundErrorCode, message: string, ctx: { accountId?: string | null | undefined; to: string }) {
    super(message);
    this.name = "AcpGroupOutboundError";
    this.code = code;
    this.accountId = ctx.accountId ?? undefined;
    this.to = ctx.to;
  }
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

/** `channels["acp-group"]` of the host config, untouched. */
export function readChannelSection(cfg: unknown): unknown {
  const channels = isPlain(cfg) ? cfg.channels : undefined;
  return isPlain(channels) ? channels[ACP_GROUP_CHANNEL_ID] : undefined;
}

/** Identity ids in config order; lenient, so a broken config still lists (and reports) its accounts. */
export function listAcpGroupAccountIds(cfg: unknown): string[] {
  const section = readChannelSection(cfg);
  const identities = isPlain(section) ? section.identities : undefined;
  return isPlain(identities) ? Object.keys(identities) : [];
}

export function defaultAcpGroupAccountId(cfg: unknown): string {
  return listAcpGroupAccountIds(cfg)[0] ?? "default";
}

/** Validates the whole channel section with our schema; every error names its config path. */
export function resolveAcpGroupAccount(cfg: unknown, accountId?: string | null): AcpGroupAccount {
  const id = accountId ?? defaultAcpGroupAccountId(cfg);
  let config: ChannelConfig;
  try {
    config = parseChannelConfig(readChannelSection(cfg) ?? {}, { prefix: CONFIG_PATH });
  } catch (err) {
    if (err instanceof ConfigError) return { accountId: id, config: null, identity: null, error: err };
    throw err;
  }
  const identity = config.identities[id] ?? null;
  if (!identity) {
    return { accountId: id, config, identity: null, error: new ConfigError([`${CONFIG_PATH}.identities: no identity \`${id}\``]) };
  }
  // Everything else, cross-field rules included, was checked by parseChannelConfig. The access
  // point defaults to the aid's own domain; the key and certificate are checked when it signs in.
  return { accountId: id, config, identity, error: null };
}

export function isAcpGroupAccountEnabled(account: AcpGroupAccount): boolean {
  return account.config?.enabled !== false && account.identity?.enabled !== false;
}

export function describeAcpGroupAccount(account: AcpGroupAccount): {
  accountId: string;
  name?: string;
  enabled: boolean;
  configured: boolean;
  baseUrl?: string;
  lastError: string | null;
} {
  const name = account.identity?.name ?? account.identity?.aid;
  return {
    accountId: account.accountId,
    ...(name ? { name } : {}),
    enabled: isAcpGroupAccountEnabled(account),
    configured: account.error === null,
    ...(account.identity ? { baseUrl: accessPointUrlFor(account.identity) } : {}),
    lastError: account.error ? account.error.issues.join("; ") : null,
  };
}

/**
 * The gateway and outbound adapters, sharing the set of running identities so that a host-initiated
 * send goes through the same transport as the identity's replies.
 */
export function createAcpGroupChannelAdapters<Cfg>(deps: {
  startIdentity: StartIdentity;
  createBackend: (params: {
    cfg: Cfg;
    accountId: string;
    config: ChannelConfig;
    identity: IdentityConfig;
    channelRuntime: unknown;
    logger: Logger;
  }) => AgentBackend;
  getPluginRuntime: () => OpenClawPluginRuntimeLike | undefined;
  /** The host's side of direct messages for one account (its default policy and pairing flow). */
  directOptions?: (params: { accountId: string; channelRuntime: unknown; logger: Logger }) => AcpGroupDirectOptions;
  /** Where our log lines go when the host gives no sink. */
  fallbackLog?: (line: string) => void;
}) {
  const running = new Map<string, RunningIdentity>();
  // What each account has done since it started in this process (status and probe read it).
  const live = new Map<string, AccountLiveStatus>();

  async function startAccount(ctx: AcpGroupGatewayContext<Cfg>): Promise<void> {
    const { account, accountId } = ctx;
    const level = account.config?.logLevel ?? "info";
    const logger = childLogger(
      ctx.log ? createHostLogger(ctx.log, level) : createJsonLogger({ level, ...(deps.fallbackLog ? { write: deps.fallbackLog } : {}) }),
      { channel: ACP_GROUP_CHANNEL_ID, identity: accountId },
    );
    if (account.error || !account.config || !account.identity) {
      const error = account.error ?? new ConfigError([`${CONFIG_PATH}.identities: no identity \`${accountId}\``]);
      logger.log("error", "openclaw.account-invalid", { issues: error.issues });
      reportStatus(ctx, logger, { running: false, configured: false, lastError: error.issues.join("; ") });
      throw error;
    }
    if (ctx.abortSignal.aborted) return;
    const { identity } = account;
    // One identity, one channel: the public ACP channel (evol) running the same aid in this
    // gateway would answer every line twice and fight over its sessions.
    const evol = evolRunsAid(ctx.cfg, identity.aid);
    if (evol) {
      const error = new Error(
        `${identity.aid} also runs in the evol channel (${evol} is enabled): one identity must not run in two channels at once. Turn evol off: \`openclaw config set ${evol}.enabled false\``,
      );
      logger.log("error", "openclaw.evol-runs-identity", { aid: identity.aid, evol });
      reportStatus(ctx, logger, { running: false, configured: true, lastError: error.message });
      throw error;
    }
    const config: ChannelConfig = { ...account.config, stateDir: account.config.stateDir ?? resolveHostStateDir(deps.getPluginRuntime()) };
    const backend = deps.createBackend({ cfg: ctx.cfg, accountId, config, identity, channelRuntime: ctx.channelRuntime, logger });
    // How the key's password arrived, never its value: `text` when the gateway resolved a reference
    // (or it was written as text), `<source>-reference` when we resolve it ourselves, `none` (ACP_SEED_PASSWORD).
    const seed = config.network.seedPassword;
    const seedPassword = seed === undefined ? "none" : typeof seed === "string" ? "text" : `${seed.source}-reference`;
    logger.log("info", "openclaw.account-start", { aid: identity.aid, accessPoint: accessPointUrlFor(identity), stateDir: config.stateDir, seedPassword });
    let identityRun: RunningIdentity | undefined;
    const status = createAccountLiveStatus({ aid: identity.aid, now: Date.now });
    live.set(accountId, status);
    try {
      const direct = deps.directOptions?.({ accountId, channelRuntime: ctx.channelRuntime, logger });
      identityRun = deps.startIdentity({ config, identityId: accountId, backend, logger, abortSignal: ctx.abortSignal, ...status.observers, ...(direct ? { direct } : {}) });
      running.set(accountId, identityRun);
      status.attach(identityRun);
      reportStatus(ctx, logger, { running: true, configured: true, lastStartAt: Date.now(), lastError: null });
      // Signed in (or refused): the host's status shows it without a probe.
      void identityRun.ready
        ?.then(() => {
          status.markSignedIn();
          reportStatus(ctx, logger, { connected: true, lastConnectedAt: Date.now() });
        })
        .catch((err: unknown) => {
          status.markError(err);
          reportStatus(ctx, logger, { connected: false, lastError: err instanceof Error ? err.message : String(err) });
        });
      // Pending until the host aborts this account; `done` never rejects.
      await identityRun.done;
      logger.log("info", "openclaw.account-stopped", {});
    } catch (err) {
      logger.log("error", "openclaw.account-failed", errorFields(err));
      reportStatus(ctx, logger, { lastError: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      if (identityRun && running.get(accountId) === identityRun) running.delete(accountId);
      try {
        await backend.close?.();
      } catch (err) {
        logger.log("warn", "openclaw.backend-close-failed", errorFields(err));
      }
      reportStatus(ctx, logger, { running: false, lastStopAt: Date.now() });
    }
  }

  async function sendText(ctx: { to: string; text: string; accountId?: string | null }): Promise<{
    channel: string;
    messageId: string;
    timestamp: number;
  }> {
    const accountId = ctx.accountId ?? (running.size === 1 ? [...running.keys()][0] : undefined);
    const identityRun = accountId === undefined ? undefined : running.get(accountId);
    if (!identityRun) {
      throw new AcpGroupOutboundError(
        "ACCOUNT_NOT_RUNNING",
        accountId === undefined
          ? `no account given and ${running.size} identities are running`
          : `identity \`${accountId}\` is not running`,
        ctx,
      );
    }
    const target = parseAcpGroupTarget(ctx.to);
    if (!target) {
      throw new AcpGroupOutboundError("INVALID_TARGET", `Expected a group target such as \`group:g1\` or an agent id such as \`alice.agentcp.io\`, got \`${ctx.to}\``, ctx);
    }
    // The host's text is model output too: cleaned like the monitor's replies before it is posted.
    const text = cleanOutboundText(ctx.text);
    if (text === "") throw new AcpGroupOutboundError("EMPTY_TEXT", "Expected visible text to send, got only control characters or whitespace", ctx);
    if (target.kind === "direct") {
      if (!identityRun.sendDirect) throw new AcpGroupOutboundError("NO_DIRECT_MESSAGES", `identity \`${accountId}\` carries no direct messages`, ctx);
      // Opens a session with the peer, or reuses the live one.
      const sent = await identityRun.sendDirect(target.peer, text);
      return { channel: ACP_GROUP_CHANNEL_ID, messageId: sent.sessionId, timestamp: Date.now() };
    }
    const sent = await identityRun.sendText(target.groupId, text);
    return { channel: ACP_GROUP_CHANNEL_ID, messageId: sent.msgId, timestamp: sent.timestamp };
  }

  return {
    gateway: { startAccount },
    // The identity's connection lives in the gateway: "gateway" makes the host hand a send made
    // elsewhere (the `openclaw message send` CLI) to the gateway, which calls sendText here. With
    // "direct" the CLI called sendText in its own process, where no identity runs.
    outbound: { deliveryMode: "gateway" as const, sendText },
    /** Identity ids with a live transport (for tests and status). */
    runningAccountIds: (): string[] => [...running.keys()],
    /** Groups and typed members of a running account (the host's directory). */
    runningDirectory: (accountId: string): { groups: readonly string[]; members: Array<{ aid: string; type: string }> } | undefined => {
      const r = running.get(accountId);
      if (!r) return undefined;
      const known = (r.memberTypes as { known?: () => Array<{ aid: string; type: string }> } | undefined)?.known;
      return { groups: r.groups ?? [], members: typeof known === "function" ? known.call(r.memberTypes) : [] };
    },
    /** The account's live status in this process, when it has started here. */
    liveStatus: (accountId: string): AccountLiveStatus | undefined => live.get(accountId),
  };
}

function reportStatus<Cfg>(ctx: AcpGroupGatewayContext<Cfg>, logger: Logger, patch: Omit<AcpGroupStatus, "accountId">): void {
  try {
    ctx.setStatus({ ...ctx.getStatus(), ...patch, accountId: ctx.accountId });
  } catch (err) {
    // Status is cosmetic; a failing status sink must not stop the identity.
    logger.log("debug", "openclaw.status-failed", errorFields(err));
  }
}
