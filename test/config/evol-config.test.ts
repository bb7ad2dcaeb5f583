// The evol channel's OpenClaw config (channels.evol, older channels.acp) turned into
// channels.acp-group: what goes where, what has no equivalent, and when evol still runs. The
// inputs are shaped as evol's own schema and install guide write them (single and multi identity).
import { describe, expect, it } from "vitest";
import { convertEvolConfig, evolAccounts, evolRunning } from "../../src/config/evol-config.ts";
import { parseChannelConfig } from "../../src/config/load.ts";

const single = {
  channels: {
    evol: {
      enabled: true,
      agentAidBindingMode: "strict",
      agentName: "my-bot",
      domain: "agentcp.io",
      seedPassword: "your-seed-password",
      ownerAid: "owner.agentcp.io",
      allowFrom: ["*"],
      agentMdPath: "~/.acp-storage/AIDs/my-bot.agentcp.io/public/agent.md",
      session: { maxTurns: 1000, maxDurationMs: 172800000, groupBufferGateMs: 3000, groupDispatchCooldownMs: 30000, groupMessageIntervalMs: 60000, groupSessionMsgLimit: 200 },
      groupSocial: { enabled: true, mentionAliases: ["bot"], mentionMinIntervalMs: 3000, maxCharsPerMessage: 500, vitalityWindowMs: 300000, maxJoinedGroups: 10 },
    },
  },
  plugins: { entries: { evol: { enabled: true } } },
  bindings: [{ agentId: "default", match: { channel: "evol", accountId: "default" } }],
};

const multi = {
  channels: {
    acp: {
      enabled: true,
      domain: "agentcp.io",
      seedPassword: "shared-seed",
      allowFrom: ["friend.agentcp.io"],
      identities: {
        work: { agentId: "work-bot", ownerAid: ["boss.agentcp.io", "deputy.agentcp.io"], allowFrom: ["*"], mentionAliases: ["worky"], profile: { displayName: "Work Bot", description: "Answers about work", capabilities: ["calendar", "mail"] } },
        personal: { agentName: "home-bot", domain: "home.example", ownerAid: "me.agentcp.io", seedPassword: "own-seed", workspaceDir: "~/ws", colour: "blue" },
      },
      context: { enableContextInjection: true },
    },
  },
  bindings: [
    { agentId: "work", match: { channel: "acp", accountId: "work" } },
    { agentId: "personal", match: { channel: "acp", accountId: "personal" } },
    { agentId: "other", match: { channel: "telegram" } },
  ],
};

describe("evol config → channels.acp-group", () => {
  it("a single identity: aid, owner, aliases, profile file, group pacing carried; DM session limits and the rest named as having no equivalent", () => {
    const c = convertEvolConfig(single, { expandHome: (p) => p.replace(/^~\//, "/home/u/") })!;
    expect(c.source).toBe("channels.evol");
    expect(c.running).toBe(true);
    expect(c.accounts).toEqual([{ accountId: "default", identityId: "my-bot", aid: "my-bot.agentcp.io", seedPassword: "your-seed-password" }]);
    expect(c.config).toEqual({
      identities: { "my-bot": { aid: "my-bot.agentcp.io", owner: "owner.agentcp.io", aliases: ["bot"], profile: { file: "/home/u/.acp-storage/AIDs/my-bot.agentcp.io/public/agent.md" } } },
      humans: [],
      groups: { "*": { bufferGateMs: 3000, cooldownMs: 30000, mentionMinIntervalMs: 3000, replyPolicy: { maxCharsPerMessage: 500 }, vitalityWindowMs: 300000 } },
    });
    expect(c.carried).toEqual([
      "channels.evol.agentName + domain → identities.my-bot.aid: my-bot.agentcp.io",
      "channels.evol.ownerAid → identities.my-bot.owner: owner.agentcp.io",
      'channels.evol.allowFrom ["*"] → (nothing: everyone may address the agent, the default here)',
      "channels.evol.groupSocial.mentionAliases → identities.my-bot.aliases: bot",
      "channels.evol.agentMdPath → identities.my-bot.profile.file: /home/u/.acp-storage/AIDs/my-bot.agentcp.io/public/agent.md (published after sign-in when it changed, as evol uploads it)",
      "channels.evol.seedPassword → opens the key on import; not written into the config (it is a secret: ACP_SEED_PASSWORD or network.seedPassword)",
      "channels.evol.session.groupBufferGateMs → groups.*.bufferGateMs: 3000",
      "channels.evol.session.groupDispatchCooldownMs → groups.*.cooldownMs: 30000",
      "channels.evol.groupSocial.mentionMinIntervalMs → groups.*.mentionMinIntervalMs: 3000",
      "channels.evol.groupSocial.maxCharsPerMessage → groups.*.replyPolicy.maxCharsPerMessage: 500",
      "channels.evol.groupSocial.vitalityWindowMs → groups.*.vitalityWindowMs: 300000",
    ]);
    expect(c.noEquivalent).toEqual([
      "channels.evol.session.groupMessageIntervalMs: no equivalent (a batch goes to the model after a pause of groups.*.bufferGateMs, and never later than bufferGateMaxWaitMs after its first message)",
      "channels.evol.session.groupSessionMsgLimit: no equivalent (one conversation per group, its older turns summarised past llm.historyTokenLimit)",
      "channels.evol.session.maxTurns: no equivalent (a limit of evol's direct-message sessions; this channel answers in groups)",
      "channels.evol.session.maxDurationMs: no equivalent (a limit of evol's direct-message sessions; this channel answers in groups)",
      "channels.evol.groupSocial.enabled: no equivalent (vitality, mentions and reply length are always on here)",
      "channels.evol.groupSocial.maxJoinedGroups: no equivalent (the agent answers in the groups its config lists)",
      "channels.evol.agentAidBindingMode: no equivalent (here one identity is one account, always)",
    ]);
    expect(c.toDo).toEqual(['bindings: default ← evol/default: add the same for acp-group, { "agentId": "default", "match": { "channel": "acp-group", "accountId": "my-bot" } }']);
    // What it produces is a valid config once a group is named.
    expect(() => parseChannelConfig({ ...c.config, groups: { ...c.config.groups, lobby: {} } })).not.toThrow();
  });

  it("several identities (the older channels.acp): per-identity values over the top level, extra owners kept as people, unknown keys named", () => {
    const c = convertEvolConfig(multi)!;
    expect(c.source).toBe("channels.acp");
    expect(c.accounts).toEqual([
      { accountId: "work", identityId: "work", aid: "work-bot.agentcp.io", seedPassword: "shared-seed" },
      { accountId: "personal", identityId: "personal", aid: "home-bot.home.example", seedPassword: "own-seed" },
    ]);
    expect(c.config.identities).toEqual({
      work: { aid: "work-bot.agentcp.io", owner: "boss.agentcp.io", aliases: ["worky"], name: "Work Bot", profile: { description: "Answers about work", tags: ["calendar", "mail"] } },
      // Its own allowFrom is unset, so evol's top-level one applies to it.
      personal: { aid: "home-bot.home.example", owner: "me.agentcp.io", groups: { "*": { allowFrom: ["friend.agentcp.io"] } } },
    });
    expect(c.config.humans).toEqual(["deputy.agentcp.io"]);
    expect(c.carried).toContain("channels.acp.identities.work.ownerAid (deputy.agentcp.io) → humans: one owner per identity here; the others are known as people");
    expect(c.carried).toContain("channels.acp.allowFrom → identities.personal.groups.*.allowFrom: friend.agentcp.io (who may address the agent in its groups)");
    expect(c.noEquivalent).toEqual([
      "channels.acp.identities.personal.workspaceDir: no equivalent (the agent.md is profile.file or generated from profile and persona)",
      "channels.acp.identities.personal.colour: unknown to this importer, not carried",
      "channels.acp.context: no equivalent (evol's context files and acp_context tool)",
    ]);
    expect(c.toDo).toHaveLength(2);
    expect(c.running).toBe(true);
    expect(() => parseChannelConfig(c.config)).not.toThrow();
  });

  it("runs only when its section says enabled: true and its plugin entry is not turned off", () => {
    expect(evolRunning(single)).toBe(true);
    expect(evolRunning({ ...single, plugins: { entries: { evol: { enabled: false } } } })).toBe(false);
    expect(evolRunning({ channels: { evol: { ...single.channels.evol, enabled: false } } })).toBe(false);
    expect(evolRunning({ channels: { evol: { agentName: "x" } } })).toBe(false); // evol's default is off
    expect(evolRunning({})).toBe(false);
    expect(convertEvolConfig({ channels: { telegram: {} } })).toBeUndefined();
  });

  it("accounts as evol resolves them: comma-separated owners, agentId over agentName, no name no account", () => {
    expect(evolAccounts({ agentName: "a", ownerAid: "x.io, y.io" }).map((a) => a.aid)).toEqual(["a.agentcp.io"]);
    expect(evolAccounts({ domain: "d.io", identities: { k: { agentId: "n1", agentName: "n2" }, bad: {}, worse: 3 } }).map((a) => a.aid)).toEqual(["n1.d.io"]);
    expect(evolAccounts({ enabled: true })).toEqual([]);
    const c = convertEvolConfig({ channels: { evol: { agentName: "a", ownerAid: "x.agentcp.io, y.agentcp.io" } } })!;
    expect([c.config.identities.a!.owner, c.config.humans]).toEqual(["x.agentcp.io", ["y.agentcp.io"]]);
  });
});
