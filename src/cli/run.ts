// `acp-group run`: the configured identities and groups against the network the config names —
// each identity's access point (`accessPointUrl`, `accessPoint`, else acp3.<its domain>), trusted
// by `network.caFile` or the system roots. It never starts a network. Prints the same transcript
// and decision lines as `start`; Ctrl-C or SIGTERM saves state and exits 0.
import { loadConfigFile } from "../config/load.ts";
import { intOption, logLevelOption, parse, UsageError, type Io } from "./args.ts";
import { requireIdentities } from "./checks.ts";
import { refuseIfEvolRuns } from "./openclaw-config.ts";
import { createCliBackend, createTranscript, decisionLine, directLine } from "./live.ts";
import { outputWidth } from "./transcript.ts";
import { createSerialPoster, openLiveSession } from "./live-session.ts";
import { createJsonLogger, errorFields } from "../log.ts";
import { createFileStateStore, defaultStateDir } from "../state/file-store.ts";
import type { ChannelConfig } from "../types.ts";
import type { RunningIdentity } from "../runtime/identity.ts";

export const RUN_OPTIONS = {
  config: { type: "string" },
  "state-dir": { type: "string" },
  "no-stdin": { type: "boolean" },
  "duration-ms": { type: "string" },
  "log-level": { type: "string" },
  "show-prompts": { type: "boolean" },
} as const;

export async function runCommand(args: string[], io: Io, opts: { signal?: AbortSignal; stdin?: NodeJS.ReadableStream } = {}): Promise<number> {
  const { values } = parse(args, RUN_OPTIONS);
  const logLevel = logLevelOption(values["log-level"]);
  const durationMs = intOption(values["duration-ms"], "duration-ms", 1);
  // Never a default: the demo config names identities no network of yours has (they would fail
  // to sign in); `start` is the command that runs it, on a network of its own.
  if (values.config === undefined) {
    throw new UsageError("expected `--config FILE`: the file `acp-group join … --config FILE` wrote (`acp-group start` runs the demo on a network of its own)");
  }
  const configFile = values.config;
  const loaded = loadConfigFile(configFile);
  const stateDir = values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const config: ChannelConfig = { ...loaded, stateDir };
  const identityIds = requireIdentities(config, configFile);
  // One identity, one channel: not while the evol channel of this machine's OpenClaw runs it too.
  refuseIfEvolRuns(identityIds.map((id) => config.identities[id]!.aid));
  const logger = createJsonLogger({ level: logLevel, write: (line) => io.err(line) });
  const store = createFileStateStore({ dir: stateDir, logger });
  const { backend, save } = createCliBackend({ config, logger, store, out: io.out, showPrompts: values["show-prompts"] === true });
  const ours = new Set(identityIds.map((id) => config.identities[id]!.aid.toLowerCase()));
  const print = createTranscript(io.out, (sender) => (ours.has(sender.toLowerCase()) ? "agent" : undefined), outputWidth);

  const session = openLiveSession({
    io,
    signal: opts.signal,
    afterStop: async () => {
      save();
      await backend.close?.();
    },
    onStopFailed: (err) => logger.log("error", "run.shutdown-failed", errorFields(err)),
  });
  try {
    // From launch: a thousand identities on a network that is down take minutes to all start.
    session.stopAfter(durationMs);
    await session.startIdentities(identityIds, (id) => ({
      config,
      backend,
      logger,
      store,
      onDecision: (d) => io.out(decisionLine(d)),
      onMessages: (_groupId, messages) => messages.forEach(print),
      direct: { onEvent: (e) => io.out(directLine(id, config.identities[id]!.aid, e, outputWidth())) },
    }));
    const { running } = session;
    io.out(`connecting ${listed(running.map((r) => `${r.identityId} (${r.aid})`))} · state: ${stateDir}`);
    const ready = Promise.all(running.map((r) => r.ready)).then(() => "ready" as const);
    const aborted = new Promise<"stopped">((resolve) => (session.signal.aborted ? resolve("stopped") : session.signal.addEventListener("abort", () => resolve("stopped"), { once: true })));
    const outcome = await Promise.race([ready, aborted]);
    if (outcome === "ready") {
      io.out(`agents online: ${listed(running.map((r) => `${r.identityId} (${r.aid})${r.groups.length > 0 ? ` in ${r.groups.join(", ")}` : ", direct messages only"}`), "; ")}`);
      reportProfiles(running, io, session.signal);
    }
    // Typed or piped lines post as the first identity with a group into its first group (the
    // operator speaking for the agent); the end of a pipe does not stop the agents — Ctrl-C,
    // SIGTERM or --duration-ms does. Identities for direct messages only have nowhere to post.
    const speaker = running.find((r) => r.groups.length > 0);
    if (outcome === "ready" && !values["no-stdin"] && speaker) {
      const groupId = speaker.groups[0]!;
      const post = createSerialPoster({
        io,
        as: speaker.aid,
        open: () => !session.signal.aborted,
        send: (text) => speaker.sendText(groupId, text),
        onFailed: (err) => logger.log("warn", "run.post-failed", { group: groupId, ...errorFields(err) }),
      });
      session.readLines({ input: opts.stdin, groupId, as: speaker.aid, post });
    }
    await session.stopped;
  } catch (err) {
    await session.stop("start failed");
    throw err;
  } finally {
    session.release();
  }
  io.out("stopped");
  return 0;
}

/** The first LISTED_MAX items, then how many more: a thousand identities are one readable line. */
export const LISTED_MAX = 10;
function listed(items: readonly string[], sep = ", "): string {
  if (items.length <= LISTED_MAX) return items.join(sep);
  return `${items.slice(0, LISTED_MAX).join(sep)}${sep}… and ${items.length - LISTED_MAX} more (${items.length} in all)`;
}

/** How many agent.md are still being published (retried until they are), and a line once all are. */
function reportProfiles(running: readonly RunningIdentity[], io: Io, stopping: AbortSignal): void {
  const pending = running.filter((r) => r.profileState === "pending" || r.profileState === "waiting").length;
  if (pending === 0) return;
  io.out(`profiles: ${pending} of ${running.length} agent.md not published yet — retrying`);
  void Promise.all(running.map((r) => r.profilePublished)).then(() => {
    if (!stopping.aborted) io.out(`profiles: every agent.md published`);
  });
}
