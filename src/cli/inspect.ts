// `acp-group inspect`: the prompt the model would get, or (--as-sent) the request as the
// configured back-end would send it.
import { parse, UsageError, type CommandSpec, type Io } from "./args.ts";
import { configuredGroups, loadOptionalConfig, openLogFile, requireGroup, requireIdentities, settingsFor, warnSilentPersona } from "./checks.ts";
import { createConversationRegistry } from "../backends/conversation-registry.ts";
import { previewChatRequest } from "../backends/chat-request.ts";
import { resolveLlmSettings } from "../backends/llm-settings.ts";
import { llmSchema } from "../config/schema.ts";
import { silentLogger } from "../log.ts";
import { createFileStateStore, defaultStateDir } from "../state/file-store.ts";
import type { ChannelConfig, IdentityConfig } from "../types.ts";
import { inspectAt, inspectSample, type InspectResult } from "../replay/inspect.ts";
import { rehome, rehomeConfig } from "../runtime/dev-network.ts";
import { listGroupsForIdentity } from "../config/load.ts";

const bare = (name: string) => !name.includes(".");

/**
 * The config as the running agent reads it. A bare name (`sam`, as the demo config writes its
 * person) is no aid on any network: `start` makes it `sam.<domain>`, so here it is the member of
 * that name on each identity's own domain — never shown as it would match no sender.
 */
function bareNamesAtHome(config: ChannelConfig): ChannelConfig {
  const first = Object.values(config.identities)[0];
  const home = (name: string, aid: string | undefined) => (bare(name) && aid ? rehome(name, aid.slice(aid.indexOf(".") + 1)) : name);
  const identities: ChannelConfig["identities"] = {};
  for (const [id, identity] of Object.entries(config.identities)) {
    identities[id] = identity.owner !== undefined ? { ...identity, owner: home(identity.owner, identity.aid) } : identity;
  }
  return { ...config, identities, humans: config.humans.map((h) => home(h, first?.aid)), agents: config.agents.map((a) => home(a, first?.aid)) };
}

/** Who speaks in the sample: the identity's owner (else a configured person), then another identity of the group. */
function sampleSenders(config: ChannelConfig, identity: IdentityConfig, groupId: string): string[] {
  const others = Object.values(config.identities).filter((i) => i !== identity && i.enabled && listGroupsForIdentity(config, i).includes(groupId));
  return [...(identity.owner ? [identity.owner] : []), ...config.humans, ...others.map((i) => i.aid)].filter((a) => !bare(a));
}

export const inspectSpec: CommandSpec = {
  name: "inspect",
  summary: "Print the exact system prompt and message body the model would get",
  usage: "[--config FILE] [--identity ID] [--group ID] [--domain D] [--log FILE --at TS] [--persona NAME] [--as-sent] [--json]",
  help: [
    "Shows the prompt for sample messages, or, with --log and --at, for what is waiting at that",
    "moment after replaying the log up to it.",
    "",
    "  --config FILE    the configuration (identities, group settings, model)",
    "  --identity ID    which identity (default: the first)",
    "  --group ID       which configured group (default: the identity's first)",
    "  --domain D       as `acp-group start --domain D` sends it: every identity and person re-homed",
    "                   onto D (default: as `run` sends it; a bare name such as `sam` is, as in",
    "                   `start`, the member sam.<the identity's domain>)",
    "  --log FILE       a recorded chat (JSON Lines) to replay up to --at",
    "  --at TS          epoch milliseconds or an ISO time (2010-08-17T14:00:00Z)",
    "  --persona NAME   whose lines in the log are the agent's own (default: the identity's name)",
    "  --as-sent        the chat request exactly as the standalone back-end sends it: the stable",
    "                   system message, the stored conversation from the state directory, and the",
    "                   situation with the messages as the new user turn",
    "  --json           the result as one JSON object",
  ].join("\n"),
  run: inspectCommand,
};

/** Epoch ms (digits only) or an ISO date/time; anything else — `-5`, `teatime` — is refused. */
function parseAt(v: string): number {
  const at = /^\d+$/.test(v) ? Number(v) : /^\d{4}-\d{2}-\d{2}([T ][\d:.]+)?(Z|[+-]\d{2}:?\d{2})?$/.test(v) ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(at)) throw new UsageError(`expected \`--at\` to be epoch ms or an ISO time, got \`${v}\``);
  return at;
}

async function inspectCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, {
    config: { type: "string" },
    identity: { type: "string" },
    group: { type: "string" },
    domain: { type: "string" },
    log: { type: "string" },
    at: { type: "string" },
    persona: { type: "string" },
    "as-sent": { type: "boolean" },
    json: { type: "boolean" },
  });
  if ((values.log === undefined) !== (values.at === undefined)) throw new UsageError("`--log` and `--at` go together");
  const at = values.at !== undefined ? parseAt(values.at) : undefined;
  const loadedConfig = loadOptionalConfig(values.config);
  const config = loadedConfig && (values.domain !== undefined ? rehomeConfig(loadedConfig, values.domain) : bareNamesAtHome(loadedConfig));
  const ids = config ? requireIdentities(config, values.config!) : [];
  const identityId = values.identity ?? ids[0] ?? "agent";
  let identity: IdentityConfig | undefined = config?.identities[identityId];
  if (values.identity && !identity) throw new UsageError(`no identity \`${values.identity}\` in the configuration (have: ${ids.join(", ") || "none"})`);
  const groups = config ? configuredGroups(config, identity) : [];
  if (values.group !== undefined) requireGroup(values.group, groups, values.config);
  identity ??= { aid: "agent.agentcp.io", name: values.persona ?? "Agent", aliases: [], enabled: true, groups: {} };
  const groupId = values.group ?? groups[0] ?? "group";
  const settings = settingsFor(config, config ? identity : undefined, groupId);
  // Member types from config, so the prompt's [Senders] lines match the running agent's.
  const members = { humans: config?.humans ?? [], agents: config?.agents ?? [] };
  let result: InspectResult;
  if (values.log !== undefined && at !== undefined) {
    // Walked from its file (sorted on disk when out of order), never held.
    const log = openLogFile(values.log, false);
    try {
      const persona = values.persona ?? identity.name ?? identity.aid;
      // Without a configuration or --persona the agent is a placeholder: nothing to check.
      if (config || values.persona !== undefined) warnSilentPersona(log.lines(), [persona, identity.aid, ...identity.aliases], io);
      result = await inspectAt({ lines: log.lines(), at, identity, persona, groupId, settings, ...members });
    } finally {
      log.close();
    }
  } else {
    result = inspectSample({ identity, groupId, settings, now: Date.now(), senders: config ? sampleSenders(config, identity, groupId) : [], ...members });
  }
  if (values["as-sent"]) return printAsSent({ config, identityId, groupId, result, json: values.json === true, io });
  if (values.json) {
    io.out(JSON.stringify(result));
    return 0;
  }
  io.out(`# identity ${identity.aid} · group ${groupId} · messages: ${result.source} (${result.messageCount}) · reply_type=${result.replyType}`);
  io.out("\n===== system prompt =====");
  io.out(result.systemPrompt);
  io.out("\n===== message body =====");
  io.out(result.body);
  return 0;
}

function printAsSent(p: { config: ChannelConfig | undefined; identityId: string; groupId: string; result: InspectResult; json: boolean; io: Io }): number {
  const llm = resolveLlmSettings(p.config?.llm ?? llmSchema.parse({}), process.env);
  const stateDir = p.config?.stateDir ?? defaultStateDir();
  // The stored conversation is read, never written back: inspect saves no state.
  const store = createFileStateStore({ dir: stateDir, logger: silentLogger });
  const conversations = createConversationRegistry({
    historyTokenLimit: llm.historyTokenLimit,
    persistence: { loadConversation: (i, g) => store.loadConversation(i, g), saveConversation: () => {} },
  });
  const history = conversations.get(p.identityId, p.groupId, p.result.stablePrefix).toChatMessages();
  const body = previewChatRequest({ settings: llm, history, request: p.result });
  if (p.json) {
    p.io.out(JSON.stringify(body));
    return 0;
  }
  const where = llm.configured ? `${llm.model} at ${llm.baseUrl ?? "the OpenAI API"}` : `no model configured (this is what ${llm.model} would get)`;
  p.io.out(`# chat request as sent · ${where} · ${body.messages.length} message(s), history from ${stateDir}`);
  for (const m of body.messages) {
    p.io.out(`\n===== ${m.role} =====`);
    p.io.out(m.content);
  }
  return 0;
}
