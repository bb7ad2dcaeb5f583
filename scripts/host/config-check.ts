// The host validates channels.acp-group with the JSON Schema we generated (openclaw.plugin.json);
// the plugin validates it again with the zod schema it came from. This runs `openclaw config
// validate` on the same configurations and checks both sides agree: the same config accepted, the
// same paths rejected (unknown keys named). Where zod can say more than JSON Schema (refinements,
// cross-field rules) ours is stricter, which is printed as a known difference.
import { ConfigError, parseChannelConfig } from "../../src/config/load.ts";
import { resolveAcpGroupAccount } from "../../src/openclaw/channel.ts";
import { createRunDir, hostEnv, resolveHostPaths, resolvePluginDir, runOpenclaw, writeJson } from "./host-env.ts";

const CHANNEL = "acp-group";
const P = `channels.${CHANNEL}`;

const valid = {
  network: { caFile: "/etc/acp/local-ca.crt" },
  humans: ["alice.agentcp.io"],
  identities: {
    bot: {
      aid: "bot.agentcp.io",
      name: "Echo",
      aliases: ["echo-bot"],
      identityDir: "/var/lib/acp/identities/bot.agentcp.io",
      accessPoint: "agentcp.io",
      owner: "alice.agentcp.io",
      groups: { "room-1": { cooldownMs: 10000 } },
    },
  },
  groups: {
    "*": { bufferGateMs: 2000, replyPolicy: { allowLong: true }, budget: { unaddressed: { "5m": { messages: 8, tokens: 4000 } } } },
    "room-1": { subject: "Room one", delay: { onMention: true } },
  },
};

type Json = Record<string, unknown>;
const clone = (v: Json): Json => structuredClone(v);
const at = (root: Json, path: string[]): Json => path.reduce((o, k) => (o[k] ??= {}) as Json, root);

/** One mistake per config, so each validator's answer for it is unambiguous. */
const rejections: Array<{ path: string; unknownKey?: string; make: (c: Json) => void }> = [
  { path: P, unknownKey: "extra", make: (c) => void (c.extra = 1) },
  { path: `${P}.network`, unknownKey: "token", make: (c) => void (at(c, ["network"]).token = "bearer") },
  { path: `${P}.identities.bot.accessPoint`, make: (c) => void (at(c, ["identities", "bot"]).accessPoint = "not a domain!") },
  { path: `${P}.identities.bot`, unknownKey: "bogus", make: (c) => void (at(c, ["identities", "bot"]).bogus = true) },
  { path: `${P}.identities.bot.aid`, make: (c) => void (at(c, ["identities", "bot"]).aid = "not an aid") },
  { path: `${P}.groups.*.bufferGateMs`, make: (c) => void (at(c, ["groups", "*"]).bufferGateMs = "3000") },
  { path: `${P}.groups.room-1.replyPolicy`, unknownKey: "nope", make: (c) => void (at(c, ["groups", "room-1", "replyPolicy"]).nope = true) },
  { path: `${P}.groups.room-1.replyPolicy.maxCharsPerMessage`, make: (c) => void (at(c, ["groups", "room-1", "replyPolicy"]).maxCharsPerMessage = 5) },
  { path: `${P}.identities.bot.groups.room-1.mentionMatch`, make: (c) => void (at(c, ["identities", "bot", "groups", "room-1"]).mentionMatch = "regex") },
];

/** Rules zod states and JSON Schema cannot: the host accepts these, the plugin rejects them. */
const oursOnly: Array<{ path: string; rule: string; make: (c: Json) => void }> = [
  { path: `${P}.groups.*.delay.fastMs`, rule: "[min, max] with min ≤ max", make: (c) => void (at(c, ["groups", "*"]).delay = { fastMs: [5000, 1000] }) },
  {
    path: `${P}.groups.room-1.bufferGateMaxWaitMs`,
    rule: "maxWait ≥ bufferGateMs",
    make: (c) => void Object.assign(at(c, ["groups", "room-1"]), { bufferGateMs: 20000, bufferGateMaxWaitMs: 5000 }),
  },
];

type Issue = { path: string; message: string };

async function hostValidate(name: string, channel: unknown): Promise<{ valid: boolean; issues: Issue[] }> {
  const host = resolveHostPaths();
  const run = createRunDir(host, `config-${name}`);
  writeJson(run.config, {
    gateway: { mode: "local" },
    update: { checkOnStart: false },
    models: { catalogRefresh: { enabled: false } },
    plugins: { allow: [CHANNEL], load: { paths: [resolvePluginDir()] }, entries: { [CHANNEL]: { enabled: true } } },
    channels: { [CHANNEL]: channel },
  });
  const res = await runOpenclaw(host, hostEnv(run), ["config", "validate", "--json"]);
  const start = res.stdout.indexOf("{");
  if (start < 0) throw new Error(`openclaw config validate printed no JSON (exit ${res.code}):\n${res.stdout}\n${res.stderr}`);
  const out = JSON.parse(res.stdout.slice(start)) as { valid?: boolean; issues?: Issue[] };
  return { valid: out.valid === true, issues: out.issues ?? [] };
}

function ourValidate(channel: unknown): { valid: boolean; issues: Issue[] } {
  const toIssues = (err: ConfigError): Issue[] =>
    err.issues.map((line) => {
      const at = line.indexOf(": ");
      return { path: line.slice(0, at), message: line.slice(at + 2) };
    });
  try {
    parseChannelConfig(channel, { prefix: P });
  } catch (err) {
    if (err instanceof ConfigError) return { valid: false, issues: toIssues(err) };
    throw err;
  }
  const account = resolveAcpGroupAccount({ channels: { [CHANNEL]: channel } }, "bot");
  return account.error ? { valid: false, issues: toIssues(account.error) } : { valid: true, issues: [] };
}

let failed = 0;
function check(name: string, ok: boolean, detail = ""): void {
  if (!ok) failed++;
  console.log(`${ok ? "  ✓" : "  ✗"} ${name}${detail ? ` — ${detail}` : ""}`);
}
const show = (issues: Issue[]) => issues.map((i) => `${i.path}: ${i.message}`).join("; ");

/** Runs `fn` over `items`, `limit` at a time (each host validation is a separate Node process). */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

const host = resolveHostPaths();
console.log(`== channel config: OpenClaw ${host.version} \`config validate\` vs our zod schema`);
const configs: Array<[string, Json]> = [
  ["valid", valid],
  ...rejections.map((r, i): [string, Json] => {
    const c = clone(valid);
    r.make(c);
    return [`reject-${i}`, c];
  }),
  ...oursOnly.map((r, i): [string, Json] => {
    const c = clone(valid);
    r.make(c);
    return [`ours-${i}`, c];
  }),
];
const hostResults = await mapLimit(configs, 4, ([name, c]) => hostValidate(name, c));
const byName = new Map(configs.map(([name], i) => [name, { host: hostResults[i]!, ours: ourValidate(configs[i]![1]) }]));

const v = byName.get("valid")!;
check("a full valid config is accepted by both", v.host.valid && v.ours.valid, [v.host.valid ? "" : `host: ${show(v.host.issues)}`, v.ours.valid ? "" : `ours: ${show(v.ours.issues)}`].filter(Boolean).join(" | "));
for (const [i, want] of rejections.entries()) {
  const { host: h, ours: o } = byName.get(`reject-${i}`)!;
  // The host names an unknown key either on the object ("… properties: \"nope\"") or at its own path.
  const names = (issue: Issue) =>
    want.unknownKey ? (issue.path === want.path && issue.message.includes(want.unknownKey)) || issue.path === `${want.path}.${want.unknownKey}` : issue.path === want.path;
  const hostHit = h.issues.find(names);
  const ourHit = o.issues.find(names);
  check(
    `both reject ${want.path}${want.unknownKey ? ` (unknown key \`${want.unknownKey}\`)` : ""}`,
    !h.valid && !o.valid && Boolean(hostHit) && Boolean(ourHit),
    `host: ${hostHit ? hostHit.message : h.valid ? "accepted" : show(h.issues)} | ours: ${ourHit ? ourHit.message : o.valid ? "accepted" : show(o.issues)}`,
  );
}
for (const [i, want] of oursOnly.entries()) {
  const { host: h, ours: o } = byName.get(`ours-${i}`)!;
  const ourHit = o.issues.find((issue) => issue.path === want.path);
  check(
    `known difference, ${want.rule}: the host accepts, the plugin rejects ${want.path}`,
    h.valid && Boolean(ourHit),
    `host: ${h.valid ? "accepts" : show(h.issues)} | ours: ${ourHit ? ourHit.message : show(o.issues)}`,
  );
}
console.log(failed ? `\nCONFIG CHECK FAILED: ${failed} mismatch(es)` : "\nCONFIG CHECK OK: the host and the plugin agree on channels.acp-group.");
if (failed) process.exitCode = 1;
