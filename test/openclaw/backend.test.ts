import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { GenerateRequest, InboundMessage } from "../../src/types.ts";
import { createMemoryLogger } from "../../src/log.ts";
import {
  OpenClawHostError,
  buildOpenClawInboundContext,
  createHostLogger,
  createOpenClawBackend,
  createReplyCollector,
  parseGroupTarget,
  resolveHostStateDir,
  type OpenClawChannelRuntime,
  type OpenClawInboundContext,
  type OpenClawReplyKind,
  type OpenClawReplyPayload,
} from "../../src/openclaw/host-calls.ts";

type Cfg = { session?: { store?: string }; marker: string };
type Ctx = OpenClawInboundContext & { finalized: true };
type Delivery = [OpenClawReplyPayload, { kind: OpenClawReplyKind }];

function message(id: string, sender: string, content: string, timestamp: number, isMention = false): InboundMessage {
  return { msgId: id, groupId: "g1", sender, content, contentType: "text", timestamp, metadata: null, isMention, engaged: false };
}

function request(overrides: Partial<GenerateRequest> = {}): GenerateRequest {
  const messages = [
    message("41", "alice.agentcp.io", "morning", 1_767_623_400_000),
    message("42", "bob.agentcp.io", "Echo, thoughts?", 1_767_623_405_000, true),
  ];
  return {
    identityId: "bot",
    groupId: "g1",
    dispatchId: 7,
    trigger: "mention",
    systemPrompt: "STABLE PREFIX\n\n## Group Situation Context\nmentioned_in_context=true",
    stablePrefix: "STABLE PREFIX",
    body: "[msg_id:41] alice.agentcp.io: morning\n[msg_id:42] bob.agentcp.io: Echo, thoughts? [mentioned]",
    messages,
    mentionInfo: { mentioned: true, mentionCount: 1, batchesMerged: 2, triggerType: "mention" },
    replyType: "short",
    maxChars: 500,
    ...overrides,
  };
}

/** A stand-in for the host's channel runtime that records every call and plays scripted deliveries. */
function fakeRuntime(script: { deliveries?: Delivery[]; dispatch?: () => Promise<void> } = {}) {
  const calls = {
    route: [] as unknown[],
    finalize: [] as OpenClawInboundContext[],
    storePath: [] as unknown[],
    record: [] as Array<{ storePath: string; sessionKey: string; ctx: Ctx }>,
    dispatch: [] as Array<{ ctx: Ctx; cfg: Cfg; replyOptions: unknown }>,
  };
  const runtime: OpenClawChannelRuntime<Cfg, Ctx> = {
    routing: {
      resolveAgentRoute: (input) => {
        calls.route.push(input);
        return { agentId: "main", accountId: "bot", sessionKey: "agent:main:acp-group:group:g1" };
      },
    },
    session: {
      resolveStorePath: (store, opts) => {
        calls.storePath.push([store, opts]);
        return "/state/agents/main/sessions/sessions.json";
      },
      recordInboundSession: async (params) => {
        calls.record.push(params);
      },
    },
    reply: {
      finalizeInboundContext: (ctx) => {
        calls.finalize.push(ctx);
        return { ...ctx, finalized: true };
      },
      dispatchReplyWithBufferedBlockDispatcher: async (params) => {
        calls.dispatch.push({ ctx: params.ctx, cfg: params.cfg, replyOptions: params.replyOptions });
        await script.dispatch?.();
        for (const [payload, info] of script.deliveries ?? []) await params.dispatcherOptions.deliver(payload, info);
        return { queuedFinal: true, counts: { tool: 0, block: 0, final: 1 } };
      },
    },
  };
  return { runtime, calls };
}

const cfg: Cfg = { marker: "host-config", session: { store: "custom-store" } };

describe("createOpenClawBackend", () => {
  it("runs one group turn: route (peer group), finalized context, session record, buffered dispatch", async () => {
    const { runtime, calls } = fakeRuntime({ deliveries: [[{ text: "Sounds good to me." }, { kind: "final" }]] });
    const backend = createOpenClawBackend({
      runtime,
      cfg,
      accountId: "bot",
      sessionStore: "custom-store",
      resolveGroupSubject: (g) => (g === "g1" ? "Release planning" : undefined),
      logger: createMemoryLogger(),
    });

    const result = await backend.generate(request());

    expect(result).toEqual({ text: "Sounds good to me." });
    expect(result.usage).toBeUndefined();
    expect(calls.route).toEqual([{ cfg, channel: "acp-group", accountId: "bot", peer: { kind: "group", id: "g1" } }]);
    expect(calls.finalize).toEqual([
      {
        Body: request().body,
        BodyForAgent: request().body,
        From: "acp-group:bob.agentcp.io",
        To: "acp-group:group:g1",
        SessionKey: "agent:main:acp-group:group:g1",
        AccountId: "bot",
        MessageSid: "42",
        ChatType: "group",
        ConversationLabel: "Release planning",
        GroupSubject: "Release planning",
        GroupSystemPrompt: "STABLE PREFIX\n\n## Group Situation Context\nmentioned_in_context=true",
        SenderId: "bob.agentcp.io",
        SenderName: "bob.agentcp.io",
        SenderIsSelf: false,
        Timestamp: 1_767_623_405_000,
        Provider: "acp-group",
        Surface: "acp-group",
        WasMentioned: true,
        GroupRequireMention: false,
        CommandAuthorized: false,
        OriginatingChannel: "acp-group",
        OriginatingTo: "acp-group:group:g1",
      },
    ]);
    expect(calls.storePath).toEqual([["custom-store", { agentId: "main" }]]);
    expect(calls.record).toHaveLength(1);
    expect(calls.record[0]).toMatchObject({ storePath: "/state/agents/main/sessions/sessions.json", sessionKey: "agent:main:acp-group:group:g1" });
    expect(calls.record[0]!.ctx.finalized).toBe(true);
    expect(calls.dispatch).toHaveLength(1);
    expect(calls.dispatch[0]!.ctx).toBe(calls.record[0]!.ctx);
    expect(calls.dispatch[0]!.cfg).toBe(cfg);
    expect(calls.dispatch[0]!.replyOptions).toEqual({ disableBlockStreaming: true });
  });

  it("runs a direct turn: the route's peer is the peer's aid, ChatType direct, the owner's lines authorised as the owner's", async () => {
    const direct = (peer: string) => {
      const messages = [message("m1", peer, "/status", 1_767_623_500_000)];
      return request({ groupId: `dm:${peer}`, conversation: { kind: "direct", peer }, messages, body: `${peer}: /status`, systemPrompt: "STABLE PREFIX\n\n## Direct Conversation Context" });
    };
    const { runtime, calls } = fakeRuntime({ deliveries: [[{ text: "All good." }, { kind: "final" }]] });
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", owner: "Olga.agentcp.io", resolveGroupSubject: () => "never for a DM", logger: createMemoryLogger() });
    expect(await backend.generate(direct("olga.agentcp.io"))).toEqual({ text: "All good." });
    await backend.generate(direct("sam.agentcp.io"));
    expect(calls.route).toEqual([
      { cfg, channel: "acp-group", accountId: "bot", peer: { kind: "direct", id: "olga.agentcp.io" } },
      { cfg, channel: "acp-group", accountId: "bot", peer: { kind: "direct", id: "sam.agentcp.io" } },
    ]);
    expect(calls.finalize[0]).toEqual({
      Body: "olga.agentcp.io: /status",
      BodyForAgent: "olga.agentcp.io: /status",
      From: "acp-group:olga.agentcp.io",
      To: "acp-group:olga.agentcp.io",
      SessionKey: "agent:main:acp-group:group:g1",
      AccountId: "bot",
      MessageSid: "m1",
      ChatType: "direct",
      ConversationLabel: "olga.agentcp.io",
      GroupSystemPrompt: "STABLE PREFIX\n\n## Direct Conversation Context",
      SenderId: "olga.agentcp.io",
      SenderName: "olga.agentcp.io",
      SenderIsSelf: false,
      Timestamp: 1_767_623_500_000,
      Provider: "acp-group",
      Surface: "acp-group",
      WasMentioned: true,
      CommandBody: "/status",
      CommandAuthorized: true,
      OwnerAllowFrom: ["Olga.agentcp.io"],
      OriginatingChannel: "acp-group",
      OriginatingTo: "acp-group:olga.agentcp.io",
    });
    // Anyone else admitted talks to the agent, never to the host's commands.
    expect(calls.finalize[1]).toMatchObject({ ChatType: "direct", SenderId: "sam.agentcp.io", CommandAuthorized: false, OwnerAllowFrom: ["Olga.agentcp.io"] });
  });

  it("a direct turn without a configured owner authorises nobody", async () => {
    const { runtime, calls } = fakeRuntime();
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    await backend.generate(request({ conversation: { kind: "direct", peer: "bob.agentcp.io" } }));
    expect(calls.finalize[0]).toMatchObject({ ChatType: "direct", CommandAuthorized: false, OwnerAllowFrom: [] });
  });

  it("uses the group id as subject when none is configured, and WasMentioned follows the mention info", async () => {
    const { runtime, calls } = fakeRuntime();
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    await backend.generate(request({ mentionInfo: { mentioned: false, mentionCount: 0, batchesMerged: 1, triggerType: "normal" } }));
    expect(calls.finalize[0]).toMatchObject({ GroupSubject: "g1", ConversationLabel: "g1", WasMentioned: false });
    expect(calls.storePath).toEqual([[undefined, { agentId: "main" }]]);
  });

  it("returns only final text: tool, block, reasoning and host error payloads never reach the group", async () => {
    const { runtime } = fakeRuntime({
      deliveries: [
        [{ text: "running search…" }, { kind: "tool" }],
        [{ text: "partial block" }, { kind: "block" }],
        [{ text: "thinking about it", isReasoning: true }, { kind: "final" }],
        [{ text: "⚠️ Agent failed: stack trace", isError: true }, { kind: "final" }],
        [{ text: "  First final.  " }, { kind: "final" }],
        [{ text: "Second final." }, { kind: "final" }],
      ],
    });
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    expect(await backend.generate(request())).toEqual({ text: "First final.\n\nSecond final." });
  });

  it("a turn that delivers nothing is silent (empty text), not an error", async () => {
    const { runtime } = fakeRuntime({ deliveries: [] });
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    expect(await backend.generate(request())).toEqual({ text: "" });
  });

  it("a turn that delivers only the host's error notice throws HOST_REPLY_ERROR (retry later, nothing posted)", async () => {
    const { runtime } = fakeRuntime({ deliveries: [[{ text: "⚠️ provider unavailable", isError: true }, { kind: "final" }]] });
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    const err = await backend.generate(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenClawHostError);
    expect(err).toMatchObject({ code: "HOST_REPLY_ERROR", identityId: "bot", groupId: "g1", dispatchId: 7 });
    expect((err as Error).message).not.toContain("provider unavailable");
  });

  it("a failing dispatch throws HOST_DISPATCH_FAILED with the cause attached", async () => {
    const cause = new TypeError("model catalog missing");
    const { runtime } = fakeRuntime({ dispatch: () => Promise.reject(cause) });
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    const err = (await backend.generate(request()).catch((e: unknown) => e)) as OpenClawHostError;
    expect(err.code).toBe("HOST_DISPATCH_FAILED");
    expect(err.cause).toBe(cause);
    expect(err.message).toBe("host reply dispatch failed: TypeError: model catalog missing");
  });

  it("passes the dispatch's abort signal to the host", async () => {
    const { runtime, calls } = fakeRuntime();
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    const controller = new AbortController();
    await backend.generate(request({ signal: controller.signal }));
    expect(calls.dispatch[0]!.replyOptions).toEqual({ disableBlockStreaming: true, abortSignal: controller.signal });
  });

  it("a session-record failure is logged and the turn still runs", async () => {
    const { runtime } = fakeRuntime({ deliveries: [[{ text: "ok" }, { kind: "final" }]] });
    runtime.session.recordInboundSession = async (params) => params.onRecordError(new Error("disk full"));
    const logger = createMemoryLogger();
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger });
    expect(await backend.generate(request())).toEqual({ text: "ok" });
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: "warn", event: "openclaw.session-record-failed", fields: expect.objectContaining({ error: "disk full", groupId: "g1" }) }));
  });

  it("an empty batch is a programming error, reported before any host call", async () => {
    const { runtime, calls } = fakeRuntime();
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    await expect(backend.generate(request({ messages: [] }))).rejects.toThrow("Expected `request.messages` to be non-empty, got 0 messages (dispatch 7)");
    expect(calls.record).toHaveLength(0);
  });
});

describe("createOpenClawBackend: transient host contention", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function contention(): Error {
    const err = new Error("another OpenClaw process owns state-lifecycle");
    err.name = "StateDatabaseCoordinatorContentionError";
    return err;
  }

  it("T+0 busy, T+1s busy, T+4s runs: the turn is retried after 1 s and 3 s", async () => {
    const attempts: number[] = [];
    let n = 0;
    const { runtime } = fakeRuntime({
      deliveries: [[{ text: "finally" }, { kind: "final" }]],
      dispatch: async () => {
        attempts.push(Date.now());
        if (n++ < 2) throw contention();
      },
    });
    const logger = createMemoryLogger();
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger });
    const t0 = Date.now();
    const result = backend.generate(request());
    await vi.advanceTimersByTimeAsync(999);
    expect(attempts.map((t) => t - t0)).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts.map((t) => t - t0)).toEqual([0, 1000]);
    await vi.advanceTimersByTimeAsync(3000);
    expect(attempts.map((t) => t - t0)).toEqual([0, 1000, 4000]);
    await expect(result).resolves.toEqual({ text: "finally" });
    expect(logger.entries.filter((e) => e.event === "openclaw.dispatch-retry").map((e) => e.fields.delayMs)).toEqual([1000, 3000]);
  });

  it("gives up after the last delay with HOST_DISPATCH_FAILED", async () => {
    const { runtime } = fakeRuntime({ dispatch: () => Promise.reject(contention()) });
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    const result = backend.generate(request()).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(4000);
    expect(await result).toMatchObject({ code: "HOST_DISPATCH_FAILED" });
  });

  it("other host errors are not retried", async () => {
    let attempts = 0;
    const { runtime } = fakeRuntime({
      dispatch: async () => {
        attempts++;
        throw new Error("bad request");
      },
    });
    const backend = createOpenClawBackend({ runtime, cfg, accountId: "bot", logger: createMemoryLogger() });
    await expect(backend.generate(request())).rejects.toMatchObject({ code: "HOST_DISPATCH_FAILED" });
    expect(attempts).toBe(1);
  });
});

describe("createReplyCollector", () => {
  it("counts what it ignored and what was an error", async () => {
    const c = createReplyCollector();
    await c.deliver({ text: "tool out" }, { kind: "tool" });
    await c.deliver({ text: "err", isError: true }, { kind: "final" });
    await c.deliver({ text: "   " }, { kind: "final" });
    await c.deliver({ text: "status", isStatusNotice: true }, { kind: "final" });
    await c.deliver({ text: "note", isCommentary: true }, { kind: "final" });
    await c.deliver({ text: "answer" }, { kind: "final" });
    expect(c.result()).toEqual({ text: "answer", finals: 1, errors: 1, ignored: 3 });
  });
});

describe("buildOpenClawInboundContext", () => {
  it("takes sender, id and time from the newest message of the batch", () => {
    const ctx = buildOpenClawInboundContext({ request: request(), channelId: "acp-group", accountId: "bot", sessionKey: "k", subject: undefined });
    expect([ctx.SenderId, ctx.MessageSid, ctx.Timestamp, ctx.From]).toEqual(["bob.agentcp.io", "42", 1_767_623_405_000, "acp-group:bob.agentcp.io"]);
  });
});

describe("parseGroupTarget", () => {
  it.each([
    ["acp-group:group:g1", "g1"],
    ["group:g1", "g1"],
    ["g1", "g1"],
    [" acp-group:room:7 ", "room:7"],
    ["acp-group:group:", ""],
  ])("%s → %s", (to, groupId) => {
    expect(parseGroupTarget(to)).toBe(groupId);
  });
});

describe("createHostLogger", () => {
  it("writes `event {fields}` to the host sink at or above the configured level", () => {
    const lines: string[] = [];
    const sink = {
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
    };
    const logger = createHostLogger(sink, "info");
    logger.log("debug", "hidden", { a: 1 });
    logger.log("info", "monitor.dispatch", { dispatchId: 1, skipReason: null });
    logger.log("warn", "plain");
    logger.log("error", "bad", { error: "boom" });
    expect(lines).toEqual(['info monitor.dispatch {"dispatchId":1,"skipReason":null}', "warn plain", 'error bad {"error":"boom"}']);
  });

  it("sends debug to the sink's debug, else to info", () => {
    const lines: string[] = [];
    const base = { info: (m: string) => lines.push(`info ${m}`), warn: () => {}, error: () => {} };
    createHostLogger(base, "debug").log("debug", "a");
    createHostLogger({ ...base, debug: (m: string) => lines.push(`debug ${m}`) }, "debug").log("debug", "b");
    expect(lines).toEqual(["info a", "debug b"]);
  });
});

describe("resolveHostStateDir", () => {
  it("prefers the host's state dir, then OPENCLAW_STATE_DIR, then ~/.openclaw", () => {
    expect(resolveHostStateDir({ state: { resolveStateDir: () => "/srv/openclaw" } }, {})).toBe("/srv/openclaw/acp-group/state");
    expect(resolveHostStateDir(undefined, { OPENCLAW_STATE_DIR: "/var/oc" })).toBe("/var/oc/acp-group/state");
    expect(resolveHostStateDir(undefined, { HOME: "/home/u" })).toBe("/home/u/.openclaw/acp-group/state");
    const throwing = { state: { resolveStateDir: (): string => { throw new Error("no"); } } };
    expect(resolveHostStateDir(throwing, { OPENCLAW_STATE_DIR: "/var/oc" })).toBe("/var/oc/acp-group/state");
  });
});
