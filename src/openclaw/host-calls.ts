// Every call into the OpenClaw host lives in this file, so a host API rename touches one place.
// Nothing here imports `openclaw` at runtime (it is an optional peer): the host's runtime arrives
// as a value, typed by the structural subset below. `scripts/host/typecheck.sh` proves the real
// host's `.d.ts` satisfies that subset (src/plugin.ts passes the real runtime into it).
import { homedir } from "node:os";
import { join } from "node:path";
import type { AgentBackend, GenerateRequest, GenerateResult, LogLevel, Logger } from "../types.ts";
import { errorFields, guardLogger } from "../log.ts";
import { wait } from "../util/wait.ts";
import { buildOpenClawInboundContext, routePeerOf, type OpenClawInboundContext } from "./inbound-context.ts";

export { buildOpenClawInboundContext, routePeerOf };
export type { OpenClawDirectContext, OpenClawGroupContext, OpenClawInboundContext } from "./inbound-context.ts";

export const ACP_GROUP_CHANNEL_ID = "acp-group";

/** Catalog metadata; the same values go into package.json `openclaw.channel`. */
export const ACP_GROUP_CHANNEL_META = {
  id: ACP_GROUP_CHANNEL_ID,
  label: "ACP Group",
  selectionLabel: "ACP group chats (agent network)",
  docsPath: "/channels/acp-group",
  blurb: "Multi-agent group chats on the ACP agent network: decides when the agent speaks, with what context, how much, and never the same thing twice.",
} as const;

export type OpenClawReplyKind = "tool" | "block" | "final";

/** The parts of the host's ReplyPayload we read. */
export type OpenClawReplyPayload = {
  text?: string;
  isError?: boolean;
  isReasoning?: boolean;
  isCommentary?: boolean;
  isStatusNotice?: boolean;
};

export type OpenClawDispatchResult = { queuedFinal: boolean; counts: Record<OpenClawReplyKind, number> };

/**
 * The subset of the host's `PluginRuntime["channel"]` we call. `Cfg` is the host's config type,
 * `Ctx` its finalized message context; both stay opaque here.
 */
export type OpenClawChannelRuntime<Cfg, Ctx> = {
  routing: {
    resolveAgentRoute: (input: {
      cfg: Cfg;
      channel: string;
      accountId?: string | null;
      peer?: { kind: "group" | "direct"; id: string } | null;
    }) => { agentId: string; accountId: string; sessionKey: string };
  };
  session: {
    resolveStorePath: (store?: string, opts?: { agentId?: string }) => string;
    recordInboundSession: (params: {
      storePath: string;
      sessionKey: string;
      ctx: Ctx;
      onRecordError: (err: unknown) => void;
    }) => Promise<void>;
  };
  reply: {
    finalizeInboundContext: (ctx: OpenClawInboundContext) => Ctx;
    dispatchReplyWithBufferedBlockDispatcher: (params: {
      ctx: Ctx;
      cfg: Cfg;
      dispatcherOptions: {
        deliver: (payload: OpenClawReplyPayload, info: { kind: OpenClawReplyKind }) => Promise<unknown>;
        onError?: (err: unknown, info: { kind: OpenClawReplyKind }) => void;
      };
      replyOptions?: { abortSignal?: AbortSignal; disableBlockStreaming?: boolean };
    }) => Promise<OpenClawDispatchResult>;
  };
};

/** The host's plugin-wide runtime, as far as we use it (state dir for our own files). */
export type OpenClawPluginRuntimeLike = { state?: { resolveStateDir?: () => string } };

export type OpenClawHostErrorCode = "HOST_REPLY_ERROR" | "HOST_DISPATCH_FAILED" | "HOST_RUNTIME_MISSING";

/** The host could not produce a reply. Logged by the monitor; never posted into a group. */
export class OpenClawHostError extends Error {
  readonly code: OpenClawHostErrorCode;
  readonly identityId: string;
  readonly groupId: string | undefined;
  readonly dispatchId: number | undefined;
  constructor(p: {
    code: OpenClawHostErrorCode;
    message: string;
    identityId: string;
    groupId?: string;
    dispatchId?: number;
    cause?: unknown;
  }) {
    super(p.message, p.cause === undefined ? undefined : { cause: p.cause });
    this.name = "OpenClawHostError";
    this.code = p.code;
    this.identityId = p.identityId;
    this.groupId = p.groupId;
    this.dispatchId = p.dispatchId;
  }
}

/** Where the host asks us to send: a group, or one agent or person directly. */
export type AcpGroupTarget = { kind: "group"; groupId: string } | { kind: "direct"; peer: string };

// An agent id: `<name>.<domain>` (the config's rule for aids).
const AID = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9-]+)+$/;

/**
 * The host's target, with or without our channel prefix: `group:<id>` names a group; `user:<aid>`
 * (also `dm:`, `direct:`) one peer; a bare agent id (`alice.agentcp.io`) a peer, anything else
 * bare a group. Undefined when it names nothing (empty, spaces, `user:` without an aid).
 */
export function parseAcpGroupTarget(to: string, channelId: string = ACP_GROUP_CHANNEL_ID): AcpGroupTarget | undefined {
  let rest = to.trim();
  if (rest.toLowerCase().startsWith(`${channelId}:`)) rest = rest.slice(channelId.length + 1).trim();
  const prefixed = /^(group|user|dm|direct):(.*)$/is.exec(rest);
  const kind = prefixed?.[1]!.toLowerCase();
  const id = (prefixed ? prefixed[2]! : rest).trim();
  if (id === "" || /\s/.test(id)) return undefined;
  if (kind === "group") return { kind: "group", groupId: id };
  if (kind !== undefined || AID.test(id)) return AID.test(id) ? { kind: "direct", peer: id } : undefined;
  return { kind: "group", groupId: id };
}

/** `acp-group:group:g1`, `group:g1` and `g1` all name group g1 (targets the host hands to outbound). */
export function parseGroupTarget(to: string, channelId: string = ACP_GROUP_CHANNEL_ID): string {
  let rest = to.trim();
  if (rest.startsWith(`${channelId}:`)) rest = rest.slice(channelId.length + 1);
  if (rest.startsWith("group:")) rest = rest.slice("group:".length);
  return rest;
}

/**
 * Collects what the host's dispatcher delivers. Only final text counts: tool output, streamed
 * blocks, reasoning and the host's own error notices must never reach the group — the monitor
 * trims, dedups, budgets and sends the final text itself.
 */
export function createReplyCollector(): {
  deliver: (payload: OpenClawReplyPayload, info: { kind: OpenClawReplyKind }) => Promise<void>;
  result(): { text: string; finals: number; errors: number; ignored: number };
} {
  const finals: string[] = [];
  let errors = 0;
  let ignored = 0;
  return {
    async deliver(payload, info) {
      if (payload.isError) {
        errors++;
        return;
      }
      if (info.kind !== "final" || payload.isReasoning || payload.isCommentary || payload.isStatusNotice) {
        ignored++;
        return;
      }
      const text = payload.text?.trim();
      if (text) finals.push(text);
    },
    result: () => ({ text: finals.join("\n\n"), finals: finals.length, errors, ignored }),
  };
}

/**
 * An `AgentBackend` that runs each dispatch as one turn of the host's agent (its model, tools,
 * memory and session) — a group turn, or a direct one with the peer — and returns the final text
 * without sending anything: our dispatch pipeline trims, dedups and sends it.
 */
export function createOpenClawBackend<Cfg, Ctx>(params: {
  runtime: OpenClawChannelRuntime<Cfg, Ctx>;
  cfg: Cfg;
  accountId: string;
  /** `cfg.session.store`, when the user configured one. */
  sessionStore?: string;
  channelId?: string;
  resolveGroupSubject?: (groupId: string) => string | undefined;
  /** The identity's owner: their direct messages reach the agent authorised as the owner's. */
  owner?: string | undefined;
  logger: Logger;
  /** Waits before re-running a turn the host refused for a transient reason; default 1 s, 3 s. */
  retryDelaysMs?: readonly number[];
}): AgentBackend {
  const { runtime, cfg, accountId, logger } = params;
  const retryDelaysMs = params.retryDelaysMs ?? [1000, 3000];
  const channelId = params.channelId ?? ACP_GROUP_CHANNEL_ID;
  return {
    name: "openclaw",
    async generate(request: GenerateRequest): Promise<GenerateResult> {
      const where = { identityId: request.identityId, groupId: request.groupId, dispatchId: request.dispatchId };
      // A group turn routes by the group; a direct one by the peer's aid (the host's DM scope applies).
      const peer = routePeerOf(request);
      const route = runtime.routing.resolveAgentRoute({ cfg, channel: channelId, accountId, peer });
      const ctx = runtime.reply.finalizeInboundContext(
        buildOpenClawInboundContext({
          request,
          channelId,
          accountId: route.accountId,
          sessionKey: route.sessionKey,
          subject: peer.kind === "group" ? params.resolveGroupSubject?.(request.groupId) : undefined,
          owner: params.owner,
        }),
      );
      const storePath = runtime.session.resolveStorePath(params.sessionStore, { agentId: route.agentId });
      await runtime.session.recordInboundSession({
        storePath,
        sessionKey: route.sessionKey,
        ctx,
        // The session record is bookkeeping for the host's UI; the turn itself can still run.
        onRecordError: (err) => logger.log("warn", "openclaw.session-record-failed", { ...where, ...errorFields(err) }),
      });
      let collector = createReplyCollector();
      let result: OpenClawDispatchResult | undefined;
      for (let attempt = 0; result === undefined; attempt++) {
        try {
          result = await runtime.reply.dispatchReplyWithBufferedBlockDispatcher({
            ctx,
            cfg,
            dispatcherOptions: {
              deliver: collector.deliver,
              onError: (err, info) => logger.log("warn", "openclaw.deliver-failed", { ...where, kind: info.kind, ...errorFields(err) }),
            },
            replyOptions: {
              disableBlockStreaming: true,
              ...(request.signal ? { abortSignal: request.signal } : {}),
            },
          });
        } catch (err) {
          const delayMs = retryDelaysMs[attempt];
          if (delayMs === undefined || !isTransientHostError(err) || request.signal?.aborted) {
            const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
            throw new OpenClawHostError({ code: "HOST_DISPATCH_FAILED", message: `host reply dispatch failed: ${reason}`, ...where, cause: err });
          }
          logger.log("info", "openclaw.dispatch-retry", { ...where, attempt: attempt + 1, delayMs, ...errorFields(err) });
          // An abort (the call's timeout, the group closing) ends the retries with its reason.
          await wait(delayMs, request.signal);
          collector = createReplyCollector();
        }
      }
      const collected = collector.result();
      logger.log("debug", "openclaw.turn", {
        ...where,
        sessionKey: route.sessionKey,
        chatType: peer.kind,
        agentId: route.agentId,
        counts: result.counts,
        finals: collected.finals,
        ignored: collected.ignored,
        errors: collected.errors,
      });
      if (!collected.text && collected.errors > 0) {
        // Only the host's error notice came back (provider down, run failed): a failure to retry,
        // not a silent decision — and its text stays out of the group.
        throw new OpenClawHostError({ code: "HOST_REPLY_ERROR", message: "host turn ended with an error reply", ...where });
      }
      // Usage is not reported by the host; the monitor estimates it.
      return { text: collected.text };
    },
  };
}

// Host errors that mean "busy, try again" rather than "this turn failed": the host's state
// database is briefly held by its own maintenance right after the gateway starts.
const TRANSIENT_HOST_ERRORS = new Set(["StateDatabaseCoordinatorContentionError"]);

export function isTransientHostError(err: unknown): boolean {
  return err instanceof Error && TRANSIENT_HOST_ERRORS.has(err.name);
}

/** Where our per-group state goes by default under the host: `<host state dir>/acp-group/state`. */
export function resolveHostStateDir(runtime: OpenClawPluginRuntimeLike | undefined, env: NodeJS.ProcessEnv = process.env): string {
  let base: string | undefined;
  try {
    base = runtime?.state?.resolveStateDir?.();
  } catch {
    base = undefined;
  }
  base ??= env.OPENCLAW_STATE_DIR?.trim() || join(env.HOME?.trim() || homedir(), ".openclaw");
  return join(base, ACP_GROUP_CHANNEL_ID, "state");
}

/** The host's per-account log sink (plain strings). */
export type OpenClawLogSink = {
  info: (msg: string) => void;
  warn: (msg: string) => void;
  error: (msg: string) => void;
  debug?: (msg: string) => void;
};

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Our structured events into the host's log: `event {"field":…}` per line, at our configured level. */
export function createHostLogger(sink: OpenClawLogSink, level: LogLevel = "info"): Logger {
  const min = RANK[level];
  // Flood-guarded like the JSON logger: repeated warnings summarised, stacks only at debug.
  return guardLogger({
    log(lvl, event, fields) {
      if (RANK[lvl] < min) return;
      const line = fields && Object.keys(fields).length > 0 ? `${event} ${safeJson(fields)}` : event;
      if (lvl === "debug") (sink.debug ?? sink.info)(line);
      else sink[lvl](line);
    },
  }, { level });
}

function safeJson(fields: Record<string, unknown>): string {
  try {
    return JSON.stringify(fields);
  } catch {
    return "{\"unserializable\":true}";
  }
}
