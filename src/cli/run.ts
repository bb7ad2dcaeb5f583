// `acp-group run`: the configured identities and groups against the network the config names —
// each identity's access point (`accessPointUrl`, `accessPoint`, else acp3.<its domain>), trusted
// by `network.caFile` or the system roots. It never starts a network. Prints the same transcript
// and decision lines as `start`; Ctrl-C or SIGTERM saves state and exits 0.
import { createInterface } from "node:readline";
import { loadConfigFile } from "../config/load.ts";
import { intOption, parse, UsageError, type Io } from "./args.ts";
import { requireIdentities } from "./checks.ts";
import { createCliBackend, createTranscript, decisionLine } from "./live.ts";
import { createJsonLogger, errorFields } from "../log.ts";
import { DEFAULT_CONFIG } from "../paths.ts";
import { startIdentity, type RunningIdentity } from "../runtime/identity.ts";
import { createFileStateStore, defaultStateDir } from "../state/file-store.ts";
import type { ChannelConfig, LogLevel } from "../types.ts";

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
  const logLevel = (values["log-level"] ?? "warn") as LogLevel;
  if (!["debug", "info", "warn", "error"].includes(logLevel)) throw new UsageError(`expected \`--log-level\` to be debug, info, warn or error, got \`${logLevel}\``);
  const durationMs = intOption(values["duration-ms"], "duration-ms", 1);
  const configFile = values.config ?? DEFAULT_CONFIG;
  const loaded = loadConfigFile(configFile);
  const stateDir = values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const config: ChannelConfig = { ...loaded, stateDir };
  const identityIds = requireIdentities(config, configFile);
  const logger = createJsonLogger({ level: logLevel, write: (line) => io.err(line) });
  const store = createFileStateStore({ dir: stateDir, logger });
  const { backend, save } = createCliBackend({ config, logger, store, out: io.out, showPrompts: values["show-prompts"] === true });
  const ours = new Set(identityIds.map((id) => config.identities[id]!.aid.toLowerCase()));
  const print = createTranscript(io.out, (sender) => (ours.has(sender.toLowerCase()) ? `${sender} (agent)` : sender));

  const stop = new AbortController();
  const running: RunningIdentity[] = [];
  let stopping: Promise<void> | undefined;
  const shutdown = (why: string): Promise<void> =>
    (stopping ??= (async () => {
      io.out(`stopping (${why}) — saving state`);
      stop.abort();
      await Promise.all(running.map((r) => r.done));
      try {
        save();
        await backend.close?.();
      } catch (err) {
        logger.log("error", "run.shutdown-failed", errorFields(err));
      }
    })());
  const onSigint = () => void shutdown("Ctrl-C");
  const onSigterm = () => void shutdown("SIGTERM");
  const onAbort = () => void shutdown("aborted");
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigterm);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let rl: ReturnType<typeof createInterface> | undefined;
  try {
    for (const id of identityIds) {
      running.push(
        startIdentity({
          config,
          identityId: id,
          backend,
          logger,
          store,
          abortSignal: stop.signal,
          onDecision: (d) => io.out(decisionLine(d)),
          onMessages: (_groupId, messages) => messages.forEach(print),
        }),
      );
    }
    io.out(`connecting ${running.map((r) => `${r.identityId} (${r.aid})`).join(", ")} · state: ${stateDir}`);
    if (durationMs !== undefined) timer = setTimeout(() => void shutdown(`--duration-ms ${durationMs}`), durationMs);
    const ready = Promise.all(running.map((r) => r.ready)).then(() => "ready" as const);
    const outcome = await Promise.race([ready, new Promise<"stopped">((resolve) => stop.signal.addEventListener("abort", () => resolve("stopped"), { once: true }))]);
    if (outcome === "ready") io.out(`agents online: ${running.map((r) => `${r.identityId} (${r.aid}) in ${r.groups.join(", ")}`).join("; ")}`);
    // Typed or piped lines post as the first identity into its first group (the operator speaking
    // for the agent); the end of a pipe does not stop the agents — Ctrl-C, SIGTERM or --duration-ms does.
    if (outcome === "ready" && !values["no-stdin"]) {
      const speaker = running[0]!;
      const groupId = speaker.groups[0]!;
      const input = opts.stdin ?? process.stdin;
      if (opts.stdin || process.stdin.isTTY) io.out(`type a line to post it into [${groupId}] as ${speaker.aid}; Ctrl-C to stop`);
      rl = createInterface({ input });
      let posting: Promise<unknown> = Promise.resolve();
      rl.on("line", (line) => {
        const text = line.trim();
        if (!text || stop.signal.aborted) return;
        posting = posting.then(() =>
          speaker.sendText(groupId, text).catch((err: unknown) => {
            io.err(`could not post as ${speaker.aid}: ${err instanceof Error ? err.message : String(err)}`);
            logger.log("warn", "run.post-failed", { group: groupId, ...errorFields(err) });
          }),
        );
      });
    }
    await new Promise<void>((resolve) => (stop.signal.aborted ? resolve() : stop.signal.addEventListener("abort", () => resolve(), { once: true })));
    await stopping;
  } catch (err) {
    await shutdown("start failed");
    throw err;
  } finally {
    if (timer) clearTimeout(timer);
    rl?.close();
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    opts.signal?.removeEventListener("abort", onAbort);
  }
  io.out("stopped");
  return 0;
}
