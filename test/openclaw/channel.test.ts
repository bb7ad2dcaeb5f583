import { describe, expect, it } from "vitest";
import type { AgentBackend, ChannelConfig } from "../../src/types.ts";
import { ConfigError } from "../../src/config/load.ts";
import {
  AcpGroupOutboundError,
  createAcpGroupChannelAdapters,
  defaultAcpGroupAccountId,
  describeAcpGroupAccount,
  isAcpGroupAccountEnabled,
  listAcpGroupAccountIds,
  resolveAcpGroupAccount,
  type AcpGroupAccount,
  type AcpGroupGatewayContext,
  type AcpGroupStatus,
  type StartIdentityParams,
} from "../../src/openclaw/channel.ts";

const channel = {
  identities: {
    bot: { aid: "bot.agentcp.io", name: "Echo" },
    helper: { aid: "helper.agentcp.io", enabled: false },
  },
  groups: { "*": { bufferGateMs: 2000 }, "room-1": { subject: "Room one" } },
  network: { seedPassword: "secret" },
};
const hostCfg = (section: unknown = channel) => ({ channels: { "acp-group": section, telegram: { enabled: true } } });

describe("accounts = identities", () => {
  it("lists identity ids in config order and defaults to the first", () => {
    expect(listAcpGroupAccountIds(hostCfg())).toEqual(["bot", "helper"]);
    expect(defaultAcpGroupAccountId(hostCfg())).toBe("bot");
    expect(listAcpGroupAccountIds({})).toEqual([]);
    expect(defaultAcpGroupAccountId({ channels: {} })).toBe("default");
  });

  it("resolves an identity with its validated config and defaults filled in", () => {
    const account = resolveAcpGroupAccount(hostCfg(), "bot");
    expect(account.error).toBeNull();
    expect(account.accountId).toBe("bot");
    expect(account.identity).toMatchObject({ aid: "bot.agentcp.io", name: "Echo", aliases: [], enabled: true });
    expect(account.config?.groups["room-1"]).toEqual({ subject: "Room one" });
    expect(isAcpGroupAccountEnabled(account)).toBe(true);
    expect(isAcpGroupAccountEnabled(resolveAcpGroupAccount(hostCfg(), "helper"))).toBe(false);
    expect(resolveAcpGroupAccount(hostCfg(), undefined).accountId).toBe("bot");
  });

  it("reports unknown keys with their config path", () => {
    const bad = { ...channel, identities: { bot: { aid: "bot.agentcp.io", tokn: "typo" } }, extra: true };
    const account = resolveAcpGroupAccount(hostCfg(bad), "bot");
    expect(account.error).toBeInstanceOf(ConfigError);
    expect([...(account.error?.issues ?? [])].sort()).toEqual(["channels.acp-group.identities.bot: unknown key `tokn`", "channels.acp-group: unknown key `extra`"]);
    expect(describeAcpGroupAccount(account)).toMatchObject({ accountId: "bot", configured: false });
    expect(describeAcpGroupAccount(account).lastError).toContain("channels.acp-group: unknown key `extra`");
  });

  it("reports a missing identity, a bad access point and cross-field group errors with paths", () => {
    expect(resolveAcpGroupAccount(hostCfg(), "ghost").error?.issues).toEqual(["channels.acp-group.identities: no identity `ghost`"]);
    const badAp = { ...channel, identities: { bot: { aid: "bot.agentcp.io", accessPoint: "not a domain!" } } };
    expect(resolveAcpGroupAccount(hostCfg(badAp), "bot").error?.issues).toEqual([
      expect.stringMatching(/^channels\.acp-group\.identities\.bot\.accessPoint: /),
    ]);
    const gates = { ...channel, groups: { "room-1": { bufferGateMs: 9000, bufferGateMaxWaitMs: 1000 } } };
    expect(resolveAcpGroupAccount(hostCfg(gates), "bot").error?.issues).toEqual([
      "channels.acp-group.groups.room-1.bufferGateMaxWaitMs: expected ≥ bufferGateMs (9000), got 1000",
    ]);
  });

  it("describes an account for the host's status view without its secrets", () => {
    const snapshot = describeAcpGroupAccount(resolveAcpGroupAccount(hostCfg(), "bot"));
    // The access point of the aid's own domain (no accessPoint configured).
    expect(snapshot).toEqual({ accountId: "bot", name: "Echo", enabled: true, configured: true, baseUrl: "https://acp3.agentcp.io", lastError: null });
    const local = describeAcpGroupAccount(resolveAcpGroupAccount(hostCfg({ ...channel, identities: { bot: { aid: "bot.acp.local", accessPointUrl: "http://127.0.0.1:8080" } } }), "bot"));
    expect(local.baseUrl).toBe("http://127.0.0.1:8080");
    expect(JSON.stringify(snapshot)).not.toContain("secret");
  });
});

/** A controllable stand-in for src/runtime/identity.ts startIdentity. */
function fakeRuntime() {
  const started: StartIdentityParams[] = [];
  const sent: Array<[string, string, string]> = [];
  const direct: Array<[string, string, string]> = [];
  let failStart: Error | undefined;
  const startIdentity = (params: StartIdentityParams) => {
    if (failStart) throw failStart;
    started.push(params);
    const done = new Promise<void>((resolve) => params.abortSignal.addEventListener("abort", () => resolve(), { once: true }));
    return {
      done,
      sendText: async (groupId: string, text: string) => {
        sent.push([params.identityId, groupId, text]);
        return { msgId: String(100 + sent.length), timestamp: 1_767_623_400_000 + sent.length };
      },
      sendDirect: async (peer: string, text: string) => {
        direct.push([params.identityId, peer, text]);
        return { sessionId: `session-${peer}` };
      },
    };
  };
  return { startIdentity, started, sent, direct, failWith: (err: Error) => (failStart = err) };
}

function gatewayContext(account: AcpGroupAccount, abort: AbortController) {
  const statuses: AcpGroupStatus[] = [];
  const lines: string[] = [];
  let current: AcpGroupStatus = { accountId: account.accountId };
  const ctx: AcpGroupGatewayContext<{ marker: string }> = {
    cfg: { marker: "cfg" },
    accountId: account.accountId,
    account,
    abortSignal: abort.signal,
    log: { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) },
    channelRuntime: { tag: "channel-runtime" },
    getStatus: () => current,
    setStatus: (next) => {
      current = next;
      statuses.push(next);
    },
  };
  return { ctx, statuses, lines };
}

function adapters(rt = fakeRuntime(), stateDir = "/host-state") {
  const backends: Array<{ accountId: string; channelRuntime: unknown; closed: boolean }> = [];
  const a = createAcpGroupChannelAdapters<{ marker: string }>({
    startIdentity: rt.startIdentity,
    getPluginRuntime: () => ({ state: { resolveStateDir: () => stateDir } }),
    createBackend: ({ accountId, channelRuntime }) => {
      const record = { accountId, channelRuntime, closed: false };
      backends.push(record);
      const backend: AgentBackend = {
        name: "fake",
        generate: async () => ({ text: "" }),
        close: async () => {
          record.closed = true;
        },
      };
      return backend;
    },
  });
  return { a, rt, backends };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

describe("gateway.startAccount", () => {
  it("runs the identity until the host aborts, with the host's state dir, then closes the backend", async () => {
    const { a, rt, backends } = adapters();
    const abort = new AbortController();
    const { ctx, statuses, lines } = gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), abort);
    let finished = false;
    const running = a.gateway.startAccount(ctx).then(() => (finished = true));
    await settle();

    expect(rt.started).toHaveLength(1);
    const params = rt.started[0]!;
    expect(params.identityId).toBe("bot");
    expect(params.abortSignal).toBe(abort.signal);
    expect(params.config.stateDir).toBe("/host-state/acp-group/state");
    expect(backends).toEqual([{ accountId: "bot", channelRuntime: { tag: "channel-runtime" }, closed: false }]);
    expect(a.runningAccountIds()).toEqual(["bot"]);
    expect(statuses.at(-1)).toMatchObject({ accountId: "bot", running: true, configured: true, lastError: null });
    expect(finished).toBe(false);

    abort.abort();
    await running;
    expect(finished).toBe(true);
    expect(backends[0]!.closed).toBe(true);
    expect(a.runningAccountIds()).toEqual([]);
    expect(statuses.at(-1)).toMatchObject({ running: false });
    expect(lines.some((l) => l.startsWith('info openclaw.account-start {"channel":"acp-group","identity":"bot"'))).toBe(true);
    expect(lines.some((l) => l.startsWith("info openclaw.account-stopped"))).toBe(true);
  });

  it("keeps a configured stateDir", async () => {
    const { a, rt } = adapters();
    const abort = new AbortController();
    const { ctx } = gatewayContext(resolveAcpGroupAccount(hostCfg({ ...channel, stateDir: "/mine" }), "bot"), abort);
    const running = a.gateway.startAccount(ctx);
    await settle();
    expect(rt.started[0]!.config.stateDir).toBe("/mine");
    abort.abort();
    await running;
  });

  it("refuses an invalid account with its config paths and never starts it", async () => {
    const { a, rt } = adapters();
    const { ctx, statuses, lines } = gatewayContext(resolveAcpGroupAccount(hostCfg({ ...channel, bogus: 1 }), "bot"), new AbortController());
    const err = await a.gateway.startAccount(ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual(["channels.acp-group: unknown key `bogus`"]);
    expect(rt.started).toHaveLength(0);
    expect(statuses.at(-1)).toMatchObject({ running: false, configured: false, lastError: "channels.acp-group: unknown key `bogus`" });
    expect(lines.some((l) => l.startsWith("error openclaw.account-invalid"))).toBe(true);
  });

  it("does not start when the host already aborted", async () => {
    const { a, rt } = adapters();
    const abort = new AbortController();
    abort.abort();
    await a.gateway.startAccount(gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), abort).ctx);
    expect(rt.started).toHaveLength(0);
  });

  it("refuses an identity the evol channel runs in the same gateway (one identity, one channel), naming the fix", async () => {
    const { a, rt } = adapters();
    const account = resolveAcpGroupAccount(hostCfg(), "bot");
    const { ctx, statuses, lines } = gatewayContext(account, new AbortController());
    const withEvol = { ...ctx, cfg: Object.assign({ marker: "cfg" }, { channels: { evol: { enabled: true, agentName: "bot", domain: "agentcp.io" } } }) };
    await expect(a.gateway.startAccount(withEvol)).rejects.toThrow(
      "bot.agentcp.io also runs in the evol channel (channels.evol is enabled): one identity must not run in two channels at once. Turn evol off: `openclaw config set channels.evol.enabled false`",
    );
    expect(rt.started).toHaveLength(0);
    expect(statuses.at(-1)).toMatchObject({ running: false, lastError: expect.stringContaining("also runs in the evol channel") });
    expect(lines.some((l) => l.startsWith("error openclaw.evol-runs-identity"))).toBe(true);
    // evol off, or running another identity: this one starts.
    const abort = new AbortController();
    const other = gatewayContext(account, abort).ctx;
    const running = a.gateway.startAccount({ ...other, cfg: Object.assign({ marker: "cfg" }, { channels: { evol: { enabled: true, agentName: "someone-else" } } }) });
    await settle();
    expect(rt.started).toHaveLength(1);
    abort.abort();
    await running;
  });

  it("a failing start rejects, is logged, and still closes the backend", async () => {
    const rt = fakeRuntime();
    rt.failWith(new Error("no groups"));
    const { a, backends } = adapters(rt);
    const { ctx, lines } = gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), new AbortController());
    await expect(a.gateway.startAccount(ctx)).rejects.toThrow("no groups");
    expect(backends[0]!.closed).toBe(true);
    expect(lines.some((l) => l.startsWith('error openclaw.account-failed {"channel":"acp-group","identity":"bot","error":"no groups"'))).toBe(true);
  });
});

describe("outbound.sendText", () => {
  it("sends through the running identity's transport to the target group", async () => {
    const { a, rt } = adapters();
    const abort = new AbortController();
    const running = a.gateway.startAccount(gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), abort).ctx);
    await settle();

    expect(await a.outbound.sendText({ to: "acp-group:group:room-1", text: "reminder: standup", accountId: "bot" })).toEqual({
      channel: "acp-group",
      messageId: "101",
      timestamp: 1_767_623_400_001,
    });
    // With one identity running, the account may be omitted.
    await a.outbound.sendText({ to: "room-1", text: "second" });
    expect(rt.sent).toEqual([
      ["bot", "room-1", "reminder: standup"],
      ["bot", "room-1", "second"],
    ]);
    // Sends made outside the gateway (the host's `message send` CLI) are handed to the gateway, where this runs.
    expect(a.outbound.deliveryMode).toBe("gateway");

    abort.abort();
    await running;
    const err = await a.outbound.sendText({ to: "room-1", text: "late", accountId: "bot" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AcpGroupOutboundError);
    expect(err).toMatchObject({ code: "ACCOUNT_NOT_RUNNING", accountId: "bot", to: "room-1" });
  });

  it("cleans the host's text like a model reply: escapes, controls and bidi overrides never reach the group", async () => {
    const { a, rt } = adapters();
    const abort = new AbortController();
    const running = a.gateway.startAccount(gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), abort).ctx);
    await settle();
    await a.outbound.sendText({ to: "room-1", text: "\u001b[31mdone\u001b[0m \u202Eok 👍", accountId: "bot" });
    expect(rt.sent).toEqual([["bot", "room-1", "done ok 👍"]]);
    const err = await a.outbound.sendText({ to: "room-1", text: "\u001b[2J\u0007", accountId: "bot" }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "EMPTY_TEXT" });
    expect(rt.sent).toHaveLength(1);
    abort.abort();
    await running;
  });

  it("an agent id as target (`acp-group:<aid>`, `user:<aid>`) is a direct message to that aid; `group:` stays a group", async () => {
    const { a, rt } = adapters();
    const abort = new AbortController();
    const running = a.gateway.startAccount(gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), abort).ctx);
    await settle();
    expect(await a.outbound.sendText({ to: "acp-group:alice.agentcp.io", text: "ping", accountId: "bot" })).toMatchObject({ channel: "acp-group", messageId: "session-alice.agentcp.io" });
    await a.outbound.sendText({ to: "user:alice.agentcp.io", text: "\u001b[31mpong\u001b[0m", accountId: "bot" });
    await a.outbound.sendText({ to: "acp-group:group:room-1", text: "to the room", accountId: "bot" });
    expect(rt.direct).toEqual([
      ["bot", "alice.agentcp.io", "ping"],
      ["bot", "alice.agentcp.io", "pong"],
    ]);
    expect(rt.sent).toEqual([["bot", "room-1", "to the room"]]);
    await expect(a.outbound.sendText({ to: "user:not an aid", text: "x", accountId: "bot" })).rejects.toMatchObject({ code: "INVALID_TARGET" });
    await expect(a.outbound.sendText({ to: "dm:room-1", text: "x", accountId: "bot" })).rejects.toMatchObject({ code: "INVALID_TARGET" });
    abort.abort();
    await running;
  });

  it("rejects an empty target", async () => {
    const { a } = adapters();
    const abort = new AbortController();
    const running = a.gateway.startAccount(gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), abort).ctx);
    await settle();
    await expect(a.outbound.sendText({ to: "acp-group:group:", text: "x", accountId: "bot" })).rejects.toMatchObject({ code: "INVALID_TARGET" });
    abort.abort();
    await running;
  });
});

describe("the config the identity receives", () => {
  it("is the validated channel config (defaults filled), not the raw host section", async () => {
    const { a, rt } = adapters();
    const abort = new AbortController();
    const running = a.gateway.startAccount(gatewayContext(resolveAcpGroupAccount(hostCfg(), "bot"), abort).ctx);
    await settle();
    const config: ChannelConfig = rt.started[0]!.config;
    expect(config.logLevel).toBe("info");
    expect(config.identities.bot?.aliases).toEqual([]);
    abort.abort();
    await running;
  });
});
