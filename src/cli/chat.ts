// `acp-group chat <link|group> --identity AID`: a person's client on any ACP network. Signs in with
// the identity (joining by the link first when given one), prints the group's recent history and
// then each new message (time, sender, `(agent)`/`(human)` when the group service says which),
// and posts each `--say` and each typed or piped line. How a person tests an agent, and how a
// script talks to a group. With `--to <aid>` it is a direct conversation instead (chat-direct.ts).
import { createInterface } from "node:readline";
import { loadConfigFile, parseChannelConfig } from "../config/load.ts";
import { intOption, parse, UsageError, type Io } from "./args.ts";
import { identityForLink, parseJoinLink } from "./join.ts";
import { joinByLink, type JoinLink } from "../runtime/join.ts";
import { createTranscript, outputWidth, type SenderMarker } from "./transcript.ts";
import { lookAtChatGroup } from "./chat-history.ts";
import { memberTypeFromServiceEntry, type MemberType } from "../members/member-types.ts";
import { createJsonLogger, errorFields } from "../log.ts";
import { aidDomain, groupServiceAid } from "../network/access-point.ts";
import { connectConfiguredIdentity } from "../runtime/link.ts";
import { defaultStateDir } from "../state/file-store.ts";
import { createGroupConnection } from "../transport/connection.ts";
import type { GroupMessage, Logger, LogLevel } from "../types.ts";
import { PERSON_CLIENT_INFO } from "../wire/client-info.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import { chatDirect } from "./chat-direct.ts";

export const CHAT_OPTIONS = {
  identity: { type: "string" },
  to: { type: "string" },
  say: { type: "string", multiple: true },
  "no-stdin": { type: "boolean" },
  "duration-ms": { type: "string" },
  "state-dir": { type: "string" },
  config: { type: "string" },
  "ca-file": { type: "string" },
  history: { type: "string" },
  "timeout-ms": { type: "string" },
  "log-level": { type: "string" },
} as const;

export async function chatCommand(args: string[], io: Io, opts: { signal?: AbortSignal; stdin?: NodeJS.ReadableStream; columns?: number } = {}): Promise<number> {
  const { values, positionals } = parse(args, CHAT_OPTIONS, true);
  const [where, ...extra] = positionals;
  if (values.to !== undefined && positionals.length > 0) throw new UsageError("expected either `--to AID` (a direct conversation) or a link or group, not both");
  if (values.to === undefined && (!where || extra.length > 0)) throw new UsageError("expected one link (https://group.<ap>/<group>?code=…), one group id, or `--to AID`");
  if (values.to !== undefined && !values.to.includes(".")) throw new UsageError(`expected \`--to\` an agent id such as ${values.to}.agentcp.io, got \`${values.to}\``);
  if (!values.identity) throw new UsageError("expected `--identity AID` (an aid from `acp-group id create`, or an identity of the config)");
  const durationMs = intOption(values["duration-ms"], "duration-ms", 1);
  const historyCount = intOption(values.history, "history", 0) ?? 20;
  const timeoutMs = intOption(values["timeout-ms"], "timeout-ms", 1) ?? 30_000;
  const loaded = values.config ? loadConfigFile(values.config) : parseChannelConfig({});
  const stateDir = values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const who = identityForLink({ config: loaded, identity: values.identity, stateDir, caFile: values["ca-file"] });
  const logger = createJsonLogger({ level: (values["log-level"] ?? "warn") as LogLevel, write: (line) => io.err(line) });
  if (values.to !== undefined) return chatTo({ io, opts, who, to: values.to, stateDir, say: values.say ?? [], historyCount, readStdin: !values["no-stdin"], durationMs, timeoutMs, logger });
  return chatInGroup({ io, opts, where: where!, loaded, who, values, historyCount, durationMs, timeoutMs, logger });
}

async function chatInGroup(p: {
  io: Io;
  opts: { signal?: AbortSignal; stdin?: NodeJS.ReadableStream; columns?: number };
  where: string;
  loaded: ReturnType<typeof parseChannelConfig>;
  who: ReturnType<typeof identityForLink>;
  values: { say?: string[] | undefined; "no-stdin"?: boolean | undefined };
  historyCount: number;
  durationMs: number | undefined;
  timeoutMs: number;
  logger: Logger;
}): Promise<number> {
  const { io, opts, where, loaded, who, values, historyCount, durationMs, timeoutMs, logger } = p;
  let target: Pick<JoinLink, "service" | "groupId">;
  if (/^https?:\/\//i.test(where)) {
    const link = parseJoinLink(where);
    const status = await joinByLink({ config: who.config, identityId: who.identityId, target: link, timeoutMs, logger, clientInfo: PERSON_CLIENT_INFO });
    if (status !== "joined" && status !== "member") {
      io.out(`${who.aid} → ${link.groupId} on ${link.service}: ${status}`);
      return status === "pending" ? 0 : 1;
    }
    target = link;
  } else {
    const ap = loaded.groups[where]?.accessPoint ?? aidDomain(who.aid);
    target = { service: groupServiceAid(ap.replace(/:\d+$/, "")), groupId: where };
  }

  const types = new Map<string, MemberType>();
  const markerOf = (sender: string): SenderMarker | undefined => {
    if (sender.toLowerCase() === who.aid.toLowerCase()) return "you";
    const t = types.get(sender.toLowerCase());
    return t === "agent" || t === "human" ? t : undefined;
  };
  // Rows wrapped before the terminal does: a row at the edge is always a real message's start.
  const print = createTranscript(io.out, markerOf, () => opts.columns ?? outputWidth());
  let live = false;
  const backlog: GroupMessage[] = [];
  // Signs in as a person's client: a network whose operator allows it reports us as a person.
  const agent = connectConfiguredIdentity({ config: who.config, identityId: who.identityId, logger, clientInfo: PERSON_CLIENT_INFO });
  const channel = agent.channel(target.service);
  // The live connection follows the group from its latest message on (what the first look found;
  // the history is that look's). It acknowledges nothing: the service's read cursor stays, so the
  // oldest messages stay readable for the next session (`after_msg_id: 0` means "from that cursor").
  let latest = 0;
  const connection = createGroupConnection({
    channel,
    aid: who.aid,
    groups: [target.groupId],
    getCursor: () => latest,
    ackCursor: () => 0,
    onMessages: (_g, messages) => {
      for (const m of messages) {
        if (live) print(m);
        else backlog.push(m);
      }
      if (live && messages.some((m) => !types.has(m.sender.toLowerCase()))) void refreshTypes();
    },
    logger,
  });
  const refreshTypes = async () => {
    try {
      const data = (await connection.request("get_members", { groupId: target.groupId })) as { members?: unknown[] } | undefined;
      for (const entry of data?.members ?? []) {
        const t = memberTypeFromServiceEntry(entry);
        if (t) types.set(t.aid.toLowerCase(), t.type);
      }
    } catch (err) {
      logger.log("warn", "chat.members-failed", { group: target.groupId, ...errorFields(err) });
    }
  };

  const stop = new AbortController();
  const onStop = () => stop.abort();
  process.once("SIGINT", onStop);
  process.once("SIGTERM", onStop);
  opts.signal?.addEventListener("abort", onStop, { once: true });
  const stopped = new Promise<void>((resolve) => (stop.signal.aborted ? resolve() : stop.signal.addEventListener("abort", () => resolve(), { once: true })));
  let timer: ReturnType<typeof setTimeout> | undefined;
  let rl: ReturnType<typeof createInterface> | undefined;
  let posting: Promise<unknown> = Promise.resolve();
  try {
    let connectTimer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      connectTimer = setTimeout(() => reject(new Error(`no session with ${target.service} within ${timeoutMs} ms`)), timeoutMs);
    });
    let history: Awaited<ReturnType<typeof lookAtChatGroup>> | undefined;
    try {
      const look = agent.ready.then(() => lookAtChatGroup({ channel, aid: who.aid, groupId: target.groupId, service: target.service, count: historyCount, logger }));
      history = (await Promise.race([look, timeout, stopped])) ?? undefined;
      if (history) {
        latest = history.latest;
        await Promise.race([connection.start(), timeout, stopped]);
      }
    } finally {
      clearTimeout(connectTimer);
    }
    if (stop.signal.aborted || history === undefined) return 0;
    await refreshTypes();
    io.out(`${who.aid} in [${target.groupId}] on ${target.service}`);
    // The last N messages, then whatever the feed brought that is newer.
    for (const m of history.messages) print(m);
    for (const m of backlog) if (msgIdValue(m.msgId) > history.latest) print(m);
    backlog.length = 0;
    live = true;

    const post = (content: string) => {
      posting = posting.then(() =>
        connection.sendMessage({ groupId: target.groupId, content }).catch((err: unknown) => {
          io.err(`could not post as ${who.aid}: ${err instanceof Error ? err.message : String(err)}`);
          logger.log("warn", "chat.post-failed", { group: target.groupId, ...errorFields(err) });
        }),
      );
    };
    for (const text of values.say ?? []) post(text);
    if (!values["no-stdin"]) {
      const input = opts.stdin ?? process.stdin;
      if (opts.stdin || process.stdin.isTTY) io.out(`type a line to post it into [${target.groupId}] as ${who.aid}; Ctrl-C to leave`);
      rl = createInterface({ input });
      rl.on("line", (line) => {
        const t = line.trim();
        if (t && !stop.signal.aborted) post(t);
      });
    }
    if (durationMs !== undefined) timer = setTimeout(onStop, durationMs);
    await stopped;
    await posting;
    return 0;
  } finally {
    if (timer) clearTimeout(timer);
    rl?.close();
    process.off("SIGINT", onStop);
    process.off("SIGTERM", onStop);
    opts.signal?.removeEventListener("abort", onStop);
    await connection.close();
    await agent.close();
  }
}

/** `chat --to`: signs in, then the direct conversation until Ctrl-C, SIGTERM or --duration-ms. */
async function chatTo(p: {
  io: Io;
  opts: { signal?: AbortSignal; stdin?: NodeJS.ReadableStream; columns?: number };
  who: ReturnType<typeof identityForLink>;
  to: string;
  stateDir: string;
  say: readonly string[];
  historyCount: number;
  readStdin: boolean;
  durationMs: number | undefined;
  timeoutMs: number;
  logger: Logger;
}): Promise<number> {
  const agent = connectConfiguredIdentity({ config: p.who.config, identityId: p.who.identityId, logger: p.logger, clientInfo: PERSON_CLIENT_INFO });
  const stop = new AbortController();
  const onStop = () => stop.abort();
  process.once("SIGINT", onStop);
  process.once("SIGTERM", onStop);
  p.opts.signal?.addEventListener("abort", onStop, { once: true });
  const stopped = new Promise<void>((resolve) => (stop.signal.aborted ? resolve() : stop.signal.addEventListener("abort", () => resolve(), { once: true })));
  const timer = p.durationMs !== undefined ? setTimeout(onStop, p.durationMs) : undefined;
  try {
    return await chatDirect({ io: p.io, agent, me: p.who.aid, peer: p.to, stateDir: p.stateDir, say: p.say, historyCount: p.historyCount, readStdin: p.readStdin, stdin: p.opts.stdin, width: () => p.opts.columns ?? outputWidth(), timeoutMs: p.timeoutMs, logger: p.logger, stopped, isStopped: () => stop.signal.aborted });
  } finally {
    if (timer) clearTimeout(timer);
    process.off("SIGINT", onStop);
    process.off("SIGTERM", onStop);
    p.opts.signal?.removeEventListener("abort", onStop);
    await agent.close();
  }
}
