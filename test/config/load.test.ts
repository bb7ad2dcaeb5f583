// Config at the edge: unknown keys and bad values rejected with their path, layers merged in order.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConfigError,
  DEFAULT_GROUP_SETTINGS,
  listGroupsForIdentity,
  loadConfigFile,
  parseChannelConfig,
  parseGroupOverrides,
  resolveGroupSettings,
} from "../../src/config/load.ts";
import { tempDir, type TempDir } from "../replay/helpers.ts";

function issuesOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  throw new Error("accepted");
}
const issues = (raw: unknown) => issuesOf(() => parseChannelConfig(raw));

describe("defaults", () => {
  it("fills every setting of an empty config", () => {
    const c = parseChannelConfig({});
    expect(c).toMatchObject({ enabled: true, humans: [], identities: {}, groups: {}, logLevel: "info" });
    expect(c.llm).toEqual({ timeoutMs: 60000, maxRetries: 2, maxTokens: 400, stream: false, historyTokenLimit: 8000 });
    expect(parseChannelConfig(undefined)).toEqual(c);
  });

  it("group settings have the documented defaults", () => {
    expect(DEFAULT_GROUP_SETTINGS).toEqual({
      enabled: true,
      bufferGateMs: 3000,
      bufferGateMaxWaitMs: 15000,
      cooldownMs: 30000,
      cooldownScale: { DORMANT: 1, COOLING: 1, ACTIVE: 1, HEATED: 2 },
      mentionMinIntervalMs: 0,
      agentMentionGapMs: 5000,
      mentionMatch: "smart",
      engagedWindowMs: 900000,
      continuationMs: 30000,
      engagedFollowUpMs: 5000,
      vitalityWindowMs: 300000,
      vitalityMaxEvents: 200,
      maxPendingMessages: 500,
      maxRetries: 2,
      retryBackoffMs: 2000,
      contextFormat: "lines",
      maxInboundChars: 1000,
      gapThresholdMs: 600000,
      decision: "single",
      maxAgentChain: 6,
      allowFrom: [],
      denyFrom: [],
      senderShare: 0.67,
      strangerShare: 0.5,
      replyPolicy: { allowLong: false, maxCharsPerMessage: 500, noMarkdown: true, maxReactionChars: 8, shortSentences: 2, normalSentences: 5, tailMark: "…" },
      budget: {
        enabled: true,
        addressed: {
          "5m": { messages: 30, tokens: 360000 },
          "3h": { messages: 540, tokens: 6480000 },
          "24h": { messages: 1440, tokens: 17280000 },
        },
        unaddressed: { "5m": { messages: 2, tokens: 24000 }, "3h": { messages: 12, tokens: 144000 }, "24h": { messages: 48, tokens: 576000 } },
        unaddressedEvery: 40,
        orphan: { "5m": { messages: 2, tokens: 24000 }, "3h": { messages: 12, tokens: 144000 }, "24h": { messages: 48, tokens: 576000 } },
      },
      orphans: { enabled: true, graceMs: 60000, adaptiveGrace: true, spreadMs: 30000, freshMs: 180000, maxAgentShare: 0.05 },
      dedup: { historySize: 10, othersHistorySize: 20, similarityThreshold: 0.8, action: "skip" },
      delay: { enabled: true, fastMs: [2000, 6000], normalMs: [8000, 20000], slowMs: [20000, 60000], onMention: false },
    });
  });
});

describe("unknown keys are rejected with their path", () => {
  it.each([
    [{ groups: { g1: { foo: 1 } } }, ["groups.g1: unknown key `foo`"]],
    [{ groups: { "*": { foo: 1, bar: 2 } } }, ["groups.*: unknown keys `foo`, `bar`"]],
    [
      { identities: { a: { aid: "a.agentcp.io", groups: { g2: { budget: { addressed: { "5m": { messages: 1, tokens: 9 }, "1h": {} } } } } } } },
      ["identities.a.groups.g2.budget.addressed: unknown key `1h`"],
    ],
    [{ identities: { a: { aid: "a.agentcp.io", nick: "x" } } }, ["identities.a: unknown key `nick`"]],
    [{ llm: { model: "m", temprature: 1 } }, ["llm: unknown key `temprature`"]],
    [{ serverURL: "ws://x" }, ["(root): unknown key `serverURL`"]],
    // A group setting one level too high is unknown, not silently ignored.
    [{ groups: { g1: { maxCharsPerMessage: 300 } } }, ["groups.g1: unknown key `maxCharsPerMessage`"]],
  ])("%j", (raw, expected) => {
    expect(issues(raw)).toEqual(expected);
  });

  it("the error message names the source file and every issue", () => {
    let err: unknown;
    try {
      parseChannelConfig({ groups: { g1: { foo: 1, bufferGateMs: -1 } } }, { source: "cfg.json" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe("CONFIG_INVALID");
    expect((err as ConfigError).message).toBe("cfg.json: invalid configuration\n  groups.g1.bufferGateMs: expected ≥ 0, got -1\n  groups.g1: unknown key `foo`");
  });

  it("a host prefix goes in front of every path", () => {
    expect(issuesOf(() => parseChannelConfig({ groups: { g1: { foo: 1 } } }, { prefix: "channels.acp" }))).toEqual(["channels.acp.groups.g1: unknown key `foo`"]);
  });
});

describe("bad values say what was expected and what was given", () => {
  it.each([
    [{ groups: { g1: { bufferGateMs: -3 } } }, "groups.g1.bufferGateMs: expected ≥ 0, got -3"],
    [{ groups: { g1: { bufferGateMs: 10_000_000 } } }, "groups.g1.bufferGateMs: expected ≤ 600000, got 10000000"],
    [{ groups: { g1: { bufferGateMs: 1.5 } } }, "groups.g1.bufferGateMs: expected an integer, got 1.5"],
    [{ groups: { g1: { bufferGateMs: "3000" } } }, 'groups.g1.bufferGateMs: expected a number, got "3000"'],
    [{ groups: { g1: { mentionMatch: "fuzzy" } } }, 'groups.g1.mentionMatch: expected one of "smart", "substring", got "fuzzy"'],
    [{ groups: { g1: { replyPolicy: { maxCharsPerMessage: 10 } } } }, "groups.g1.replyPolicy.maxCharsPerMessage: expected ≥ 20, got 10"],
    [{ groups: { g1: { dedup: { similarityThreshold: 2 } } } }, "groups.g1.dedup.similarityThreshold: expected ≤ 1, got 2"],
    [{ groups: { g1: { delay: { fastMs: [5000, 2000] } } } }, "groups.g1.delay.fastMs: expected [min, max] with min ≤ max, got [5000,2000]"],
    [{ groups: { g1: { budget: { unaddressed: { "5m": { messages: 1 } } } } } }, "groups.g1.budget.unaddressed.5m.tokens: required: expected a number"],
    [{ groups: { "": {} } }, 'groups: invalid key "" (expected at least 1 character(s), got 0)'],
    [{ identities: { a: { aid: "a.agentcp.io", aliases: [""] } } }, "identities.a.aliases.0: expected at least 1 character(s), got 0"],
    [{ humans: "bob" }, 'humans: expected an array, got "bob"'],
    [{ logLevel: "loud" }, 'logLevel: expected one of "debug", "info", "warn", "error", got "loud"'],
    [{ network: { caFile: "" } }, "network.caFile: expected at least 1 character(s), got 0"],
    [{ serverUrl: "ws://localhost" }, "(root): unknown key `serverUrl`"],
    [[], "(root): expected an object, got []"],
  ])("%j", (raw, expected) => {
    expect(issues(raw)).toEqual([expected]);
  });
});

describe("agent ids", () => {
  it.each(["not an aid", "alice", ".agentcp.io", "alice..io", "alice.agentcp.io/x"])("rejects %j", (aid) => {
    expect(issues({ identities: { a: { aid } } })).toEqual([`identities.a.aid: expected an agent id such as alice.agentcp.io, got ${JSON.stringify(aid)}`]);
  });

  it("requires one", () => {
    expect(issues({ identities: { a: { name: "A" } } })).toEqual(["identities.a.aid: required: expected a string"]);
  });

  it.each(["alice.agentcp.io", "bob_2.agentcp.io", "x-1.a.b"])("accepts %j", (aid) => {
    expect(parseChannelConfig({ identities: { a: { aid } } }).identities.a!.aid).toBe(aid);
  });
});

describe("layered merge: defaults ← groups[*] ← groups[id] ← identity.groups[*] ← identity.groups[id]", () => {
  const config = parseChannelConfig({
    groups: {
      "*": { bufferGateMs: 1000, cooldownMs: 1100, engagedWindowMs: 1200, mentionMinIntervalMs: 1300, cooldownScale: { HEATED: 3 } },
      g1: { cooldownMs: 2100, engagedWindowMs: 2200, mentionMinIntervalMs: 2300, replyPolicy: { maxCharsPerMessage: 300 } },
    },
    identities: {
      a: {
        aid: "a.agentcp.io",
        groups: {
          "*": { engagedWindowMs: 3200, mentionMinIntervalMs: 3300, replyPolicy: { noMarkdown: false } },
          g1: { mentionMinIntervalMs: 4300, budget: { unaddressed: { "5m": { messages: 1, tokens: 100 } } } },
        },
      },
      b: { aid: "b.agentcp.io" },
    },
  });
  const a = config.identities.a!;
  const pick = (s: ReturnType<typeof resolveGroupSettings>) => [s.bufferGateMs, s.cooldownMs, s.engagedWindowMs, s.mentionMinIntervalMs, s.engagedFollowUpMs];

  it("identity a in g1 takes each value from the most specific layer that sets it", () => {
    const s = resolveGroupSettings(config, a, "g1");
    expect(pick(s)).toEqual([1000, 2100, 3200, 4300, 5000]);
    expect(s.cooldownScale).toEqual({ DORMANT: 1, COOLING: 1, ACTIVE: 1, HEATED: 3 });
    expect(s.replyPolicy).toEqual({ allowLong: false, maxCharsPerMessage: 300, noMarkdown: false, maxReactionChars: 8, shortSentences: 2, normalSentences: 5, tailMark: "…" });
    expect(s.budget).toEqual({
      enabled: true,
      addressed: DEFAULT_GROUP_SETTINGS.budget.addressed,
      unaddressed: { "5m": { messages: 1, tokens: 100 }, "3h": { messages: 12, tokens: 144000 }, "24h": { messages: 48, tokens: 576000 } },
      unaddressedEvery: 40,
      orphan: DEFAULT_GROUP_SETTINGS.budget.orphan,
    });
  });

  it("identity a in another group: groups[*] then identity.groups[*]", () => {
    const s = resolveGroupSettings(config, a, "g2");
    expect(pick(s)).toEqual([1000, 1100, 3200, 3300, 5000]);
    expect(s.replyPolicy.maxCharsPerMessage).toBe(500);
    expect(s.replyPolicy.noMarkdown).toBe(false);
    expect(s.budget.unaddressed["5m"]).toEqual({ messages: 2, tokens: 24000 });
  });

  it("identity b (no overrides) in g1 and g2, and no identity", () => {
    const b = config.identities.b!;
    expect(pick(resolveGroupSettings(config, b, "g1"))).toEqual([1000, 2100, 2200, 2300, 5000]);
    expect(pick(resolveGroupSettings(config, b, "g2"))).toEqual([1000, 1100, 1200, 1300, 5000]);
    expect(pick(resolveGroupSettings(config, undefined, "g1"))).toEqual([1000, 2100, 2200, 2300, 5000]);
    expect(resolveGroupSettings(config, b, "g1").replyPolicy.noMarkdown).toBe(true);
  });

  it("lists the named groups of an identity, without disabled ones", () => {
    const c = parseChannelConfig({
      groups: { "*": {}, g1: {}, g3: { enabled: false } },
      identities: { a: { aid: "a.agentcp.io", groups: { g2: {}, g1: { enabled: false }, g3: { enabled: true } } } },
    });
    expect(listGroupsForIdentity(c, c.identities.a!)).toEqual(["g2", "g3"]);
  });
});

describe("bufferGateMaxWaitMs must not be below bufferGateMs", () => {
  it("is rejected at load time, naming the layer that sets it", () => {
    expect(issues({ groups: { g1: { bufferGateMs: 20000 } } })).toEqual(["groups.g1.bufferGateMaxWaitMs: expected ≥ bufferGateMs (20000), got 15000"]);
    expect(issues({ groups: { "*": { bufferGateMaxWaitMs: 1000 } } })).toEqual(["groups.*.bufferGateMaxWaitMs: expected ≥ bufferGateMs (3000), got 1000"]);
    expect(issues({ identities: { a: { aid: "a.agentcp.io", groups: { g1: { bufferGateMs: 20000 } } } } })).toEqual([
      "identities.a.groups.g1.bufferGateMaxWaitMs: expected ≥ bufferGateMs (20000), got 15000",
    ]);
  });

  it("is judged on the merged values: a later layer can make it valid", () => {
    const c = parseChannelConfig({
      groups: { g1: { bufferGateMs: 20000 } },
      identities: { a: { aid: "a.agentcp.io", groups: { g1: { bufferGateMaxWaitMs: 30000 } } } },
    });
    expect(resolveGroupSettings(c, c.identities.a!, "g1").bufferGateMaxWaitMs).toBe(30000);
  });

  it("equal values are fine", () => {
    expect(resolveGroupSettings(parseChannelConfig({ groups: { g1: { bufferGateMs: 15000 } } }), undefined, "g1").bufferGateMs).toBe(15000);
  });
});

describe("parseGroupOverrides", () => {
  it("checks one group's overrides with the group's path", () => {
    expect(parseGroupOverrides({ cooldownMs: 5 }, "g9")).toEqual({ cooldownMs: 5 });
    expect(issuesOf(() => parseGroupOverrides({ cooldownMs: -5, nope: 1 }, "g9"))).toEqual(["groups.g9.cooldownMs: expected ≥ 0, got -5", "groups.g9: unknown key `nope`"]);
  });
});

describe("loadConfigFile", () => {
  let dir: TempDir;
  beforeAll(() => {
    dir = tempDir();
  });
  afterAll(() => dir.remove());

  it("reads a valid file", () => {
    const file = dir.json("ok.json", { identities: { alice: { aid: "alice.agentcp.io" } }, groups: { g1: { cooldownMs: 0 } } });
    const c = loadConfigFile(file);
    expect(c.identities.alice!.aid).toBe("alice.agentcp.io");
    expect(c.groups.g1).toEqual({ cooldownMs: 0 });
  });

  it("a missing file names the file", () => {
    const file = join(dir.path, "missing.json");
    expect(() => loadConfigFile(file)).toThrow(new ConfigError(["cannot read file: ENOENT"], file));
    expect(() => loadConfigFile(file)).toThrow(`${file}: invalid configuration\n  cannot read file: ENOENT`);
  });

  it("bad JSON names the file", () => {
    const file = dir.text("bad.json", '{"groups": {');
    let err: unknown;
    try {
      loadConfigFile(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message.startsWith(`${file}: invalid configuration\n  not valid JSON: `)).toBe(true);
  });

  it("an invalid value names the file and the path", () => {
    const file = dir.json("invalid.json", { groups: { g1: { cooldownMs: -1 } } });
    expect(() => loadConfigFile(file)).toThrow(`${file}: invalid configuration\n  groups.g1.cooldownMs: expected ≥ 0, got -1`);
  });

  it("the shipped demo config loads", () => {
    expect(Object.keys(loadConfigFile("config/demo.json").identities).length).toBeGreaterThan(0);
  });

  it("the shipped direct-message example loads, and a bad dmPolicy or limit names its path", () => {
    const dave = loadConfigFile("config/direct.json").identities.dave!;
    expect(dave).toMatchObject({ dmPolicy: "pairing", allowFrom: ["*.mycompany.example"], denyFrom: ["spam.agentcp.io"], direct: { maxAgentTurns: 6 } });
    const bad = dir.json("bad-dm.json", { identities: { d: { aid: "d.agentcp.io", dmPolicy: "everyone", direct: { maxAgentTurns: 0, extra: 1 } } } });
    expect(() => loadConfigFile(bad)).toThrow(/identities\.d\.dmPolicy: .*pairing.*allowlist.*open.*disabled/);
    expect(() => loadConfigFile(bad)).toThrow(/identities\.d\.direct\.maxAgentTurns: expected ≥ 1, got 0/);
    expect(() => loadConfigFile(bad)).toThrow(/identities\.d\.direct: unknown key `extra`/);
  });
});
