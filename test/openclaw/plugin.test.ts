// src/plugin.ts wired with a stand-in for the host SDK (the host itself is exercised by
// `npm run test:host`). The stand-in mirrors what openclaw@2026.9.6's helpers do: the entry
// registers the channel and hands over the runtime; the chat plugin merges base and outbound.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { StartIdentityParams } from "../../src/runtime/identity.ts";

const hoisted = vi.hoisted(() => ({ started: [] as Array<{ params: unknown; abort: () => void }> }));

vi.mock("openclaw/plugin-sdk/channel-core", () => ({
  createChannelPluginBase: (p: Record<string, unknown>) => ({ ...p, meta: { ...(p.meta as object), id: p.id } }),
  // As 2026.9.6's helper does: `pairing.text` becomes the host's pairing adapter (createInlineTextPairingAdapter).
  createChatChannelPlugin: (p: {
    base: Record<string, unknown>;
    outbound?: unknown;
    pairing?: { text: { idLabel: string; message: string; normalizeAllowEntry?: unknown; notify: (x: Record<string, unknown>) => unknown } };
  }) => ({
    ...p.base,
    capabilities: p.base.capabilities ?? { chatTypes: ["direct"] },
    ...(p.pairing
      ? {
          pairing: {
            idLabel: p.pairing.text.idLabel,
            normalizeAllowEntry: p.pairing.text.normalizeAllowEntry,
            notifyApproval: async (ctx: Record<string, unknown>) => p.pairing!.text.notify({ ...ctx, message: p.pairing!.text.message }),
          },
        }
      : {}),
    ...(p.outbound ? { outbound: p.outbound } : {}),
  }),
  defineChannelPluginEntry: (o: { id: string; name: string; description: string; plugin: unknown; setRuntime?: (r: unknown) => void }) => ({
    id: o.id,
    name: o.name,
    description: o.description,
    channelPlugin: o.plugin,
    register(api: { registrationMode: string; registerChannel: (r: { plugin: unknown }) => void; runtime: unknown }) {
      if (api.registrationMode === "cli-metadata") return;
      api.registerChannel({ plugin: o.plugin });
      o.setRuntime?.(api.runtime);
    },
  }),
}));

// The host's setup contract helper: the fields and adapter pass through as given.
vi.mock("openclaw/plugin-sdk/channel-setup", () => ({
  defineChannelSetupContract: (p: { fields: unknown; adapter: unknown }) => ({ kind: "channel-owned", metadata: { fields: p.fields }, adapter: p.adapter, parseInput: (v: unknown) => ({ ok: true, value: v }) }),
}));

vi.mock("../../src/runtime/identity.ts", () => ({
  startIdentity: (params: StartIdentityParams) => {
    let abort!: () => void;
    const done = new Promise<void>((resolve) => (abort = resolve));
    params.abortSignal?.addEventListener("abort", () => abort(), { once: true });
    hoisted.started.push({ params, abort });
    return { done, sendText: async () => ({ msgId: "9", timestamp: 1 }) };
  },
}));

const { default: entry, acpGroupChannelPlugin } = await import("../../src/plugin.ts");

const cfg = {
  channels: {
    "acp-group": {
      identities: { bot: { aid: "bot.agentcp.io", name: "Echo" } },
      groups: { "room-1": { subject: "Room one" } },
    },
  },
};

/** Records the host calls a generate() makes. */
function hostChannelRuntime() {
  const calls: string[] = [];
  return {
    calls,
    runtime: {
      routing: {
        resolveAgentRoute: (input: { peer: { kind: string; id: string } }) => {
          calls.push(`route ${input.peer.kind}:${input.peer.id}`);
          return { agentId: "main", accountId: "bot", sessionKey: "agent:main:acp-group:group:room-1" };
        },
      },
      session: {
        resolveStorePath: () => "/s",
        recordInboundSession: async () => void calls.push("record"),
      },
      reply: {
        finalizeInboundContext: (ctx: { GroupSubject: string }) => {
          calls.push(`finalize ${ctx.GroupSubject}`);
          return ctx;
        },
        dispatchReplyWithBufferedBlockDispatcher: async (p: { dispatcherOptions: { deliver: (x: unknown, i: unknown) => Promise<unknown> } }) => {
          calls.push("dispatch");
          await p.dispatcherOptions.deliver({ text: "hello room" }, { kind: "final" });
          return { queuedFinal: true, counts: { tool: 0, block: 0, final: 1 } };
        },
      },
    },
  };
}

describe("src/plugin.ts", () => {
  beforeEach(() => {
    hoisted.started.length = 0;
  });

  it("is a channel entry for acp-group that registers the plugin and takes the host runtime", () => {
    expect(entry).toMatchObject({ id: "acp-group", name: "ACP Group" });
    const registered: unknown[] = [];
    entry.register({ registrationMode: "full", registerChannel: (r: { plugin: unknown }) => registered.push(r.plugin), runtime: {} } as never);
    expect(registered).toEqual([acpGroupChannelPlugin]);
    expect(acpGroupChannelPlugin).toMatchObject({
      id: "acp-group",
      meta: { id: "acp-group", label: "ACP Group", docsPath: "/channels/acp-group" },
      capabilities: { chatTypes: ["direct", "group"] },
      reload: { configPrefixes: ["channels.acp-group"] },
      outbound: { deliveryMode: "gateway" },
    });
  });

  it("lets our gate decide: the host never requires a mention for our turns", () => {
    expect(acpGroupChannelPlugin.groups?.resolveRequireMention?.({ cfg, groupId: "room-1" } as never)).toBe(false);
  });

  it("maps accounts to identities through the config adapter", () => {
    const config = acpGroupChannelPlugin.config;
    expect(config.listAccountIds(cfg as never)).toEqual(["bot"]);
    const account = config.resolveAccount(cfg as never, "bot");
    expect(account).toMatchObject({ accountId: "bot", error: null, identity: { aid: "bot.agentcp.io" } });
    expect(config.isConfigured?.(account, cfg as never)).toBe(true);
    const broken = config.resolveAccount({ channels: { "acp-group": { identities: { bot: { aid: "bot.agentcp.io", oops: 1 } } } } } as never, "bot");
    expect(config.unconfiguredReason?.(broken, cfg as never)).toContain("channels.acp-group.identities.bot: unknown key `oops`");
  });

  it("starts the identity with a backend that runs turns through the host runtime, until abort", async () => {
    const host = hostChannelRuntime();
    entry.register({ registrationMode: "full", registerChannel: () => {}, runtime: { channel: host.runtime, state: { resolveStateDir: () => "/oc" } } } as never);
    const abort = new AbortController();
    const account = acpGroupChannelPlugin.config.resolveAccount(cfg as never, "bot");
    let status: Record<string, unknown> = { accountId: "bot" };
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
    const running = acpGroupChannelPlugin.gateway!.startAccount!({
      cfg,
      accountId: "bot",
      account,
      abortSignal: abort.signal,
      log,
      getStatus: () => status,
      setStatus: (next: Record<string, unknown>) => (status = next),
    } as never);
    await new Promise((r) => setImmediate(r));

    expect(hoisted.started).toHaveLength(1);
    const params = hoisted.started[0]!.params as StartIdentityParams;
    expect(params.identityId).toBe("bot");
    expect(params.config.stateDir).toBe("/oc/acp-group/state");
    expect(params.backend.name).toBe("openclaw");
    // Direct messages follow the host: its default policy, its pairing store.
    expect(params.direct?.defaultPolicy).toBe("pairing");
    expect(typeof params.direct?.pairing?.isApproved).toBe("function");
    const messages = [{ msgId: "5", groupId: "room-1", sender: "alice.agentcp.io", content: "hi Echo", contentType: "text", timestamp: 1, metadata: null, isMention: true, engaged: false }];
    const result = await params.backend.generate({
      identityId: "bot",
      groupId: "room-1",
      dispatchId: 1,
      trigger: "mention",
      systemPrompt: "S",
      stablePrefix: "S",
      body: "B",
      messages,
      mentionInfo: { mentioned: true, mentionCount: 1, batchesMerged: 1, triggerType: "mention" },
      replyType: "short",
      maxChars: 500,
    });
    expect(result).toEqual({ text: "hello room" });
    expect(host.calls).toEqual(["route group:room-1", "finalize Room one", "record", "dispatch"]);
    expect(status).toMatchObject({ running: true });

    abort.abort();
    await running;
    expect(status).toMatchObject({ running: false });
    expect(lines.map((l) => l.split(" ")[0])).toEqual(["openclaw.account-start", "openclaw.account-stopped"]);
  });
});

describe("the host-facing adapters of src/plugin.ts", () => {
  it("the setup entry (doctor, channels add) is the same plugin, with setup, status, doctor, security, tool policy, directory and targets", async () => {
    const { default: setupEntry } = await import("../../src/setup-entry.ts");
    expect(setupEntry.plugin).toBe(acpGroupChannelPlugin);
    const p = acpGroupChannelPlugin as unknown as Record<string, Record<string, unknown>>;
    expect(Object.keys(p).filter((k) => ["setupContract", "status", "doctor", "security", "directory", "messaging"].includes(k)).sort()).toEqual(["directory", "doctor", "messaging", "security", "setupContract", "status"]);
    const resolveToolPolicy = p.groups!.resolveToolPolicy as (x: unknown) => unknown;
    expect(resolveToolPolicy({ cfg, groupId: "room-1", accountId: "bot" })).toEqual({ deny: ["*"] });
    const normalizeTarget = p.messaging!.normalizeTarget as (raw: string) => string | undefined;
    expect(normalizeTarget("acp-group:room-1")).toBe("group:room-1");
    expect(normalizeTarget("acp-group:alice.agentcp.io")).toBe("user:alice.agentcp.io");
    // The host's resolver takes an aid as given (a direct chat), and looks names up in the directory.
    const messaging = p.messaging as unknown as { inferTargetChatType: (x: { to: string }) => unknown; targetResolver: { looksLikeId: (raw: string) => boolean } };
    expect(["acp-group:alice.agentcp.io", "user:alice.agentcp.io", "acp-group:group:room-1", "group:room-1", "room-1", "Room one"].map((raw) => messaging.targetResolver.looksLikeId(raw))).toEqual([true, true, true, true, false, false]);
    expect(["acp-group:alice.agentcp.io", "room-1", "group:alice.agentcp.io"].map((to) => messaging.inferTargetChatType({ to }))).toEqual(["direct", undefined, undefined]);
    const listGroups = p.directory!.listGroups as (x: unknown) => Promise<unknown>;
    await expect(listGroups({ cfg, accountId: "bot" })).resolves.toEqual([{ kind: "group", id: "group:room-1", name: "Room one" }]);
    // Not started in this process: the probe says why it is not signed in, and the key is missing.
    const probe = (await (p.status!.probeAccount as (x: unknown) => Promise<Record<string, unknown>>)({ account: acpGroupChannelPlugin.config.resolveAccount(cfg, "bot"), timeoutMs: 1000, cfg })) as Record<string, unknown>;
    expect(probe).toMatchObject({ ok: false, aid: "bot.agentcp.io", signedIn: false, key: "missing" });
  });
});

describe("direct messages: the host's pairing and security audit", () => {
  it("offers the host's pairing adapter (`openclaw pairing approve acp-group <code>`), normalising entries to aids", async () => {
    const pairing = (acpGroupChannelPlugin as unknown as { pairing?: { idLabel: string; normalizeAllowEntry?: (e: string) => string; notifyApproval?: (x: unknown) => Promise<void> } }).pairing;
    expect(pairing?.idLabel).toBe("ACP agent id");
    expect(pairing?.normalizeAllowEntry?.("acp-group:Alice.AgentCP.io")).toBe("alice.agentcp.io");
    const logged: string[] = [];
    await pairing?.notifyApproval?.({ cfg, id: "alice.agentcp.io", runtime: { log: (l: string) => logged.push(l), error: () => {} } });
    expect(logged).toEqual([expect.stringContaining("alice.agentcp.io is approved and will be answered from their next message")]);
  });

  it("gives the host's security audit each identity's DM policy: the host's pairing by default, open flagged with `*`", () => {
    const security = acpGroupChannelPlugin.security as unknown as { resolveDmPolicy: (x: unknown) => Record<string, unknown> | null };
    const account = acpGroupChannelPlugin.config.resolveAccount(cfg as never, "bot");
    expect(security.resolveDmPolicy({ cfg, accountId: "bot", account })).toMatchObject({
      policy: "pairing",
      allowFrom: [],
      policyPath: "channels.acp-group.identities.bot.dmPolicy",
      allowFromPath: "channels.acp-group.identities.bot.",
      approveHint: expect.stringContaining("openclaw pairing approve acp-group <code>"),
    });
    const open = { channels: { "acp-group": { ...cfg.channels["acp-group"], humans: ["hank.agentcp.io"], identities: { bot: { aid: "bot.agentcp.io", owner: "olga.agentcp.io", dmPolicy: "open", allowFrom: ["*.friends.io"] } } } } };
    const openAccount = acpGroupChannelPlugin.config.resolveAccount(open as never, "bot");
    expect(security.resolveDmPolicy({ cfg: open, accountId: "bot", account: openAccount })).toMatchObject({ policy: "open", allowFrom: ["olga.agentcp.io", "hank.agentcp.io", "*.friends.io", "*"] });
  });
});

describe("the guided setup the host runs on a terminal (setupWizard)", () => {
  it("is a setup wizard adapter (getStatus + configure), so `openclaw channels add` without flags and `openclaw onboard` can set the channel up", async () => {
    const wizard = (acpGroupChannelPlugin as unknown as { setupWizard?: { channel?: string; getStatus?: unknown; configure?: unknown } }).setupWizard;
    expect(wizard?.channel).toBe("acp-group");
    expect([typeof wizard?.getStatus, typeof wizard?.configure]).toEqual(["function", "function"]);
    const status = await (wizard!.getStatus as (ctx: unknown) => Promise<unknown>)({ cfg, accountOverrides: {} });
    expect(status).toEqual({ channel: "acp-group", configured: true, statusLines: ["ACP Group: bot.agentcp.io"], selectionHint: "configured" });
  });
});

describe("the doctor entry the host calls (doctor.collectPreviewWarnings)", () => {
  it("reports an access point that cannot be reached, with the command that fixes it (a real closed port on 127.0.0.1)", async () => {
    const { createServer } = await import("node:net");
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const { port: p } = srv.address() as { port: number };
        srv.close(() => resolve(p));
      });
    });
    const closed = { channels: { "acp-group": { stateDir: "/nonexistent-acp-state", identities: { bot: { aid: "bot.acp.local", accessPointUrl: `http://127.0.0.1:${port}` } } } } };
    const collect = acpGroupChannelPlugin.doctor!.collectPreviewWarnings!;
    const lines = await collect({ cfg: closed as never, doctorFixCommand: "openclaw doctor --fix", env: {} });
    expect(lines).toContainEqual(
      `- channels.acp-group.identities.bot (bot.acp.local): the access point http://127.0.0.1:${port} cannot be reached: connection refused (nothing listens on that port). ` +
        "Check the address (a local network: is `acp-group server` running?), then set it: `openclaw config set channels.acp-group.identities.bot.accessPointUrl <access point URL>`",
    );
  });

  it("reports this machine's clock 10 min ahead of a real local network's access point, with the time-sync command", async () => {
    const { startLocalNetwork } = await import("../../src/server/network/index.ts");
    const { tempDir } = await import("../network/support.ts");
    const tmp = tempDir("acp-plugin-doctor-");
    const net = await startLocalNetwork({ domain: "acp.local", stateDir: tmp.dir });
    // Only Date is faked (the sockets run on real timers): the local clock reads 10 minutes ahead.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * 60_000 });
    try {
      const ahead = { channels: { "acp-group": { stateDir: tmp.dir, identities: { bot: { aid: "bot.acp.local", accessPointUrl: net.localUrl } } } } };
      const lines = await acpGroupChannelPlugin.doctor!.collectPreviewWarnings!({ cfg: ahead as never, doctorFixCommand: "openclaw doctor --fix", env: {} });
      expect(lines.filter((l) => l.includes("clock"))).toEqual([expect.stringMatching(/^- channels\.acp-group\.identities\.bot \(bot\.acp\.local\): this machine's clock is (9 min 5\d s|10 min( \d s)?) ahead of the access point .*`sudo timedatectl set-ntp true`/)]);
    } finally {
      vi.useRealTimers();
      await net.close();
      tmp.cleanup();
    }
  });
});
