// `openclaw` is an optional peer, absent from a plain checkout, so the project's own type-check
// sees the SDK through this declaration: a hand-written subset of what src/plugin.ts uses, with
// the signatures of openclaw@2026.9.6 (dist/plugin-sdk/channel-core.d.ts and the types it
// re-exports). scripts/host/typecheck.sh checks src/plugin.ts against the real .d.ts instead
// (this file is not part of that check), so a drift here cannot hide a real mismatch.
declare module "openclaw/plugin-sdk/channel-core" {
  export type OpenClawConfig = {
    channels?: Record<string, unknown>;
    session?: { store?: string };
    [key: string]: unknown;
  };

  type MsgContext = {
    Body?: string;
    BodyForAgent?: string;
    From?: string;
    To?: string;
    SessionKey?: string;
    AccountId?: string;
    MessageSid?: string;
    ChatType?: string;
    ConversationLabel?: string;
    GroupSubject?: string;
    GroupSystemPrompt?: string;
    SenderId?: string;
    SenderName?: string;
    SenderIsSelf?: boolean;
    Timestamp?: number;
    Provider?: string;
    Surface?: string;
    WasMentioned?: boolean;
    GroupRequireMention?: boolean;
    CommandAuthorized?: boolean;
    CommandBody?: string;
    OwnerAllowFrom?: Array<string | number>;
    OriginatingChannel?: string;
    OriginatingTo?: string;
  };
  type FinalizedMsgContext = Omit<MsgContext, "CommandAuthorized"> & { CommandAuthorized: boolean };

  type ChatType = "direct" | "group" | "channel";
  type ReplyDispatchKind = "tool" | "block" | "final";
  type ReplyPayload = { text?: string; isError?: boolean; isReasoning?: boolean; isCommentary?: boolean; isStatusNotice?: boolean; replyToId?: string };

  export type PluginRuntime = {
    version: string;
    channel: {
      routing: {
        resolveAgentRoute: (input: { cfg: OpenClawConfig; channel: string; accountId?: string | null; peer?: { kind: ChatType; id: string } | null }) => {
          agentId: string;
          channel: string;
          accountId: string;
          sessionKey: string;
          mainSessionKey: string;
        };
      };
      session: {
        resolveStorePath: (store?: string, opts?: { agentId?: string; env?: NodeJS.ProcessEnv }) => string;
        recordInboundSession: (params: {
          storePath: string;
          sessionKey: string;
          ctx: MsgContext;
          createIfMissing?: boolean;
          onRecordError: (err: unknown) => void;
        }) => Promise<void>;
      };
      reply: {
        finalizeInboundContext: <T extends Record<string, unknown>>(ctx: T) => T & FinalizedMsgContext;
        dispatchReplyWithBufferedBlockDispatcher: (params: {
          ctx: MsgContext | FinalizedMsgContext;
          cfg: OpenClawConfig;
          dispatcherOptions: {
            deliver: (payload: ReplyPayload, info: { kind: ReplyDispatchKind }) => Promise<unknown>;
            onError?: (err: unknown, info: { kind: ReplyDispatchKind }) => void;
          };
          replyOptions?: { abortSignal?: AbortSignal; disableBlockStreaming?: boolean };
        }) => Promise<{ queuedFinal: boolean; counts: Record<ReplyDispatchKind, number> }>;
      };
      pairing: {
        buildPairingReply: (params: { channel: string; idLine: string; code: string }) => string;
        readAllowFromStore: (params: { channel: string; accountId: string; env?: NodeJS.ProcessEnv }) => Promise<string[]>;
        upsertPairingRequest: (params: {
          channel: string;
          id: string | number;
          accountId: string;
          meta?: Record<string, string | undefined | null>;
          env?: NodeJS.ProcessEnv;
        }) => Promise<{ code: string; created: boolean }>;
      };
    };
    state: { resolveStateDir: (env?: NodeJS.ProcessEnv) => string };
  };

  type ChannelSecurityDmPolicy = {
    policy: string;
    allowFrom?: Array<string | number> | null;
    policyPath?: string;
    allowFromPath: string;
    approveHint: string;
    normalizeEntry?: (raw: string) => string;
  };
  type RuntimeEnv = { log: (...args: unknown[]) => void; error: (...args: unknown[]) => void };
  type ChatChannelPairingOptions = {
    text: {
      idLabel: string;
      message: string;
      normalizeAllowEntry?: (entry: string) => string;
      notify: (params: { cfg: OpenClawConfig; id: string; accountId?: string; meta?: Record<string, string>; runtime?: RuntimeEnv; message: string }) => Promise<void> | void;
    };
  };

  type ChannelAccountSnapshot = {
    accountId: string;
    name?: string;
    enabled?: boolean;
    configured?: boolean;
    running?: boolean;
    baseUrl?: string;
    lastStartAt?: number | null;
    lastStopAt?: number | null;
    lastError?: string | null;
    [key: string]: unknown;
  };

  type ChannelLogSink = {
    info: (msg: string) => void;
    warn: (msg: string) => void;
    error: (msg: string) => void;
    debug?: (msg: string) => void;
  };

  type ChannelConfigAdapter<A> = {
    listAccountIds: (cfg: OpenClawConfig) => string[];
    resolveAccount: (cfg: OpenClawConfig, accountId?: string | null) => A;
    defaultAccountId?: (cfg: OpenClawConfig) => string;
    isEnabled?: (account: A, cfg: OpenClawConfig) => boolean;
    isConfigured?: (account: A, cfg: OpenClawConfig) => boolean | Promise<boolean>;
    unconfiguredReason?: (account: A, cfg: OpenClawConfig) => string;
    describeAccount?: (account: A, cfg: OpenClawConfig) => ChannelAccountSnapshot;
  };

  type ChannelGatewayContext<A> = {
    cfg: OpenClawConfig;
    accountId: string;
    account: A;
    abortSignal: AbortSignal;
    log?: ChannelLogSink;
    getStatus: () => ChannelAccountSnapshot;
    setStatus: (next: ChannelAccountSnapshot) => void;
    channelRuntime?: { [key: string]: unknown };
  };

  type ChannelOutboundAdapter = {
    deliveryMode: "direct" | "gateway" | "hybrid";
    sendText?: (ctx: { cfg: OpenClawConfig; to: string; text: string; accountId?: string | null }) => Promise<{
      channel: string;
      messageId: string;
      timestamp?: number;
    }>;
  };

  type ChannelDirectoryEntry = { kind: "user" | "group" | "channel"; id: string; name?: string; handle?: string; rank?: number; raw?: unknown };
  type ChannelAccountSnapshot = {
    accountId: string;
    name?: string;
    enabled?: boolean;
    configured?: boolean;
    running?: boolean;
    connected?: boolean;
    lastConnectedAt?: number | null;
    lastInboundAt?: number | null;
    lastOutboundAt?: number | null;
    lastError?: string | null;
    identity?: string;
    baseUrl?: string;
    probe?: unknown;
    lastProbeAt?: number | null;
  };

  export type ChannelPlugin<A = any> = {
    id: string;
    meta: { id: string; label: string; selectionLabel: string; docsPath: string; blurb: string; markdownCapable?: boolean };
    capabilities: { chatTypes: Array<"direct" | "group" | "channel" | "thread">; reactions?: boolean; media?: boolean; blockStreaming?: boolean };
    reload?: { configPrefixes: string[] };
    config: ChannelConfigAdapter<A>;
    groups?: {
      resolveRequireMention?: (params: { cfg: OpenClawConfig; groupId?: string | null }) => boolean | undefined;
      resolveToolPolicy?: (params: { cfg: OpenClawConfig; groupId?: string | null; accountId?: string | null }) => { allow?: string[]; alsoAllow?: string[]; deny?: string[] } | undefined;
    };
    status?: {
      probeAccount?: (params: { account: A; timeoutMs: number; cfg: OpenClawConfig }) => Promise<unknown>;
      buildAccountSnapshot?: (params: { account: A; cfg: OpenClawConfig; runtime?: ChannelAccountSnapshot; probe?: unknown }) => ChannelAccountSnapshot | Promise<ChannelAccountSnapshot>;
      buildChannelSummary?: (params: { account: A; cfg: OpenClawConfig; defaultAccountId: string; snapshot: ChannelAccountSnapshot }) => Record<string, unknown> | Promise<Record<string, unknown>>;
    };
    doctor?: { collectPreviewWarnings?: (params: { cfg: OpenClawConfig; doctorFixCommand: string; env?: NodeJS.ProcessEnv }) => string[] | Promise<string[]> };
    security?: {
      resolveDmPolicy?: (ctx: { cfg: OpenClawConfig; accountId?: string | null; account: A }) => ChannelSecurityDmPolicy | null;
      collectWarnings?: (ctx: { cfg: OpenClawConfig; accountId?: string | null; account: A }) => string[] | Promise<string[]>;
    };
    messaging?: {
      targetPrefixes?: readonly string[];
      normalizeTarget?: (raw: string) => string | undefined;
      inferTargetChatType?: (params: { to: string }) => "direct" | "group" | "channel" | undefined;
      targetResolver?: { looksLikeId?: (raw: string, normalized?: string) => boolean; hint?: string };
    };
    directory?: {
      listGroups?: (params: { cfg: OpenClawConfig; accountId?: string | null; query?: string | null; limit?: number | null }) => Promise<ChannelDirectoryEntry[]>;
      listPeers?: (params: { cfg: OpenClawConfig; accountId?: string | null; query?: string | null; limit?: number | null }) => Promise<ChannelDirectoryEntry[]>;
    };
    outbound?: ChannelOutboundAdapter;
    gateway?: { startAccount?: (ctx: ChannelGatewayContext<A>) => Promise<unknown> };
    setupContract?: import("openclaw/plugin-sdk/channel-setup").ChannelOwnedSetupContract;
    /** The guided setup (ChannelSetupWizardAdapter): status in the channel list, then configure with the host's prompter. */
    setupWizard?: {
      channel: string;
      getStatus: (ctx: { cfg: OpenClawConfig }) => Promise<{ channel: string; configured: boolean; statusLines: string[]; selectionHint?: string }>;
      configure: (ctx: {
        cfg: OpenClawConfig;
        prompter: {
          note: (message: string, title?: string) => Promise<void>;
          text: (params: { message: string; initialValue?: string; placeholder?: string; validate?: (value: string) => string | undefined }) => Promise<string>;
          confirm: (params: { message: string; initialValue?: boolean }) => Promise<boolean>;
          progress: (label: string) => { update: (message: string) => void; stop: (message?: string) => void };
        };
        accountOverrides: Partial<Record<string, string>>;
      }) => Promise<{ cfg: OpenClawConfig; accountId?: string }>;
    };
  };

  export function createChannelPluginBase<A>(
    params: Pick<ChannelPlugin<A>, "id"> & Partial<Omit<ChannelPlugin<A>, "id" | "meta" | "outbound" | "gateway">> & { meta?: Partial<ChannelPlugin<A>["meta"]> },
  ): Pick<ChannelPlugin<A>, "id" | "meta"> & Partial<Omit<ChannelPlugin<A>, "id" | "meta">>;

  export function createChatChannelPlugin<A extends { accountId?: string | null }>(params: {
    base: Omit<ChannelPlugin<A>, "capabilities" | "outbound"> & Partial<Pick<ChannelPlugin<A>, "capabilities" | "outbound">>;
    pairing?: ChatChannelPairingOptions;
    outbound?: ChannelOutboundAdapter;
  }): ChannelPlugin<A>;

  export function defineChannelPluginEntry<TPlugin>(options: {
    id: string;
    name: string;
    description: string;
    plugin: TPlugin;
    setRuntime?: (runtime: PluginRuntime) => void;
  }): { id: string; name: string; description: string; register: (api: unknown) => void; channelPlugin: TPlugin };
}

declare module "openclaw/plugin-sdk/channel-setup" {
  import type { OpenClawConfig } from "openclaw/plugin-sdk/channel-core";
  type SetupField =
    | { kind: "string"; sensitive?: boolean; cli: { flags: string; description: string } }
    | { kind: "boolean"; cli: { flags: string; description: string } }
    | { kind: "string-list"; sensitive?: boolean; cli: { flags: string; description: string } };
  type FieldValue<F> = F extends { kind: "boolean" } ? boolean : F extends { kind: "string-list" } ? string[] : string;
  type InputOf<Fields> = { name?: string } & { [K in keyof Fields]?: FieldValue<Fields[K]> };
  export type ChannelOwnedSetupContract = { kind: "channel-owned"; metadata: { fields: readonly unknown[] }; parseInput: (input: unknown) => { ok: true; value: unknown } | { ok: false; error: string } };
  export function defineChannelSetupContract<const Fields extends Record<string, SetupField>>(params: {
    fields: Fields;
    adapter: {
      prepareAccountConfigInput?: (params: { cfg: OpenClawConfig; accountId: string; input: InputOf<Fields>; runtime: unknown }) => Promise<InputOf<Fields>> | InputOf<Fields>;
      applyAccountConfig: (params: { cfg: OpenClawConfig; accountId: string; input: InputOf<Fields> }) => OpenClawConfig;
      validateInput?: (params: { cfg: OpenClawConfig; accountId: string; input: InputOf<Fields> }) => string | null;
    };
  }): ChannelOwnedSetupContract;
}

declare module "openclaw/plugin-sdk/channel-secret-basic-runtime" {
  // The slice of the host's secret contract helpers src/secret-contract-api.ts uses.
  export type SecretDefaults = { env?: string; file?: string; exec?: string; store?: string } | undefined;
  export type ResolverContext = { env: NodeJS.ProcessEnv; assignments: unknown[] };
  export type SecretTargetRegistryEntry = { id: string; pathPattern: string; targetType: string; configFile: string };
  export function createChannelSecretTargetRegistryEntries(params: { channelKey: string; account?: readonly string[]; channel?: readonly string[] }): SecretTargetRegistryEntry[];
  export function getChannelRecord(config: { channels?: Record<string, unknown> }, channelKey: string): Record<string, unknown> | undefined;
  export function collectSecretInputAssignment(params: {
    value: unknown;
    path: string;
    expected: "string" | "string-or-object";
    defaults: SecretDefaults | undefined;
    context: ResolverContext;
    active?: boolean;
    inactiveReason?: string;
    owner?: { ownerKind: "account"; ownerId: string; requiredForGateway: boolean; disposition: "fail-closed" | "isolate"; contract?: unknown };
    apply: (value: unknown) => void;
  }): void;
}
