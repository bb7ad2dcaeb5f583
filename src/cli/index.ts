// `acp-group <command>`. Commands are rows of one table (name, summary, usage, help, run); the
// general help and each `<command> --help` are printed from it. Errors are printed as one clear
// line (no stack trace); usage errors add a hint; `--debug` or ACP_GROUP_DEBUG=1 adds the stack.
import { readFileSync } from "node:fs";
import { ID_HELP } from "./id-help.ts";
import { CommandError, renderCommandHelp, renderUsage, UsageError, type CommandSpec, type Io } from "./args.ts";
import { ConfigError } from "../config/load.ts";
import { DEFAULT_LOCAL_DOMAIN } from "../server/network/defaults.ts";
import { DEFAULT_CONFIG, PACKAGE_JSON } from "../paths.ts";
import { LogParseError } from "../replay/log.ts";
import { inspectSpec } from "./inspect.ts";
import { explainUnreachable } from "./reach.ts";
import { replaySpec } from "./replay.ts";
import { pairingSpec } from "./pairing.ts";

const startSpec: CommandSpec = {
  name: "start",
  summary: "Run the configured agents in a live group on an embedded local server",
  usage:
    "[--config FILE] [--say TEXT]... [--dm 'NAME TEXT']... [--as NAME] [--group ID] [--no-stdin] [--duration-ms N]\n" +
    "[--log-level debug|info|warn|error] [--state-dir DIR] [--fresh] [--show-prompts]\n" +
    "[--domain D] [--port P] [--tls]",
  help: [
    "Starts a local ACP network (access point, message service, group service group.<domain>) and",
    "every enabled identity of the configuration, each signed in with its own key over real sockets,",
    "and prints the conversation and each dispatch decision. Lines typed (or piped) on stdin are",
    "posted into the group by the human member, who signs in like everyone else; a line `/dm NAME TEXT`",
    "is sent to that agent as a direct message instead. Ctrl-C or SIGTERM stops it and saves state.",
    "",
    `  --config FILE      the configuration (default: ${DEFAULT_CONFIG})`,
    "  --say TEXT         post TEXT as the human at start (repeatable)",
    "  --dm 'NAME TEXT'   send TEXT to agent NAME as the human's direct message at start (repeatable)",
    "  --as NAME          the human's name (default: the first of `humans`)",
    "  --group ID         where --say and typed lines go (default: the first group)",
    "  --no-stdin         do not read lines from stdin",
    "  --duration-ms N    stop after N ms",
    "  --log-level L      structured JSON logs on stderr at debug, info, warn (default) or error",
    "  --state-dir DIR    the state directory (default: stateDir, ACP_GROUP_STATE_DIR, ~/.acp-group/state)",
    "  --fresh            use a new empty state directory, removed at exit (a demo that runs twice)",
    "  --show-prompts     print each dispatch's model request as it is sent",
    `  --domain D         the local network's domain (default ${DEFAULT_LOCAL_DOMAIN}); identities become <name>.D`,
    "  --port P           one port for the access point and the message socket (default: any free port)",
    "  --tls              HTTPS/WSS with a certificate from the local CA (its path is printed as `ca:`)",
  ].join("\n"),
  run: async (args, io) => (await import("./start.ts")).startCommand(args, io),
};

const chatSpec: CommandSpec = {
  name: "chat",
  summary: "Talk in a group, or to one agent directly, as a person: history, live messages, post lines",
  usage:
    "(<link|group> | --to AID) --identity AID [--say TEXT]... [--no-stdin] [--duration-ms N] [--history N]\n" +
    "[--state-dir DIR] [--config FILE] [--ca-file CA] [--timeout-ms N] [--log-level L]",
  help: [
    "Signs in with the identity (an aid from `acp-group id create`, or an identity of --config), joins by",
    "the link first when given one, prints the group's recent history and then each new message",
    "(time, sender, (agent)/(human) when the group service says which), and posts each --say and each",
    "typed or piped line. Ctrl-C, SIGTERM or --duration-ms leaves.",
    "With --to AID it is a direct conversation with that agent instead: the history of that conversation",
    "(kept in <stateDir>/direct-history), then each line as it comes; --say and typed lines go to AID.",
    "",
    "  --to AID           talk to AID one to one (a direct message, as the official SDK sends it)",
    "  --say TEXT         post TEXT once connected (repeatable)",
    "  --history N        how many earlier messages to show first (default 20)",
    "  --no-stdin         do not read lines from stdin",
    "  --duration-ms N    leave after N ms",
    "  --ca-file CA       trust this CA (default: network.caFile, else what `id create` used)",
  ].join("\n"),
  run: async (args, io) => (await import("./chat.ts")).chatCommand(args, io),
};

const serverSpec: CommandSpec = {
  name: "server",
  summary: "Run the local ACP network alone (access point, message service, group.<domain>)",
  usage: "[--domain D] [--port P] [--tls] [--config FILE] [--state-dir DIR] [--duration-ms N] [--log-level L]\n[--people-from-chat] [--no-presence] [--strict-invite-ms N] [--max-agents-per-source N]",
  help: [
    `A local ACP network for development. Groups and members come from the config (default ${DEFAULT_CONFIG}).`,
    "At start it prints `access point: <url>`, `ca: <path>` (with --tls) and `join <group>: <link>` per group.",
    "With --tls it serves HTTPS/WSS with a certificate from its own CA whose names cover acp3.D, *.D,",
    "localhost and 127.0.0.1.",
    "",
    "  --people-from-chat    a member whose latest sign-in came from `acp-group chat` (a person's client) is a",
    "                        person to the agents (get_members says human); without it only the config's",
    "                        humans are people",
    "  --no-presence         serve no UDP presence (no heartbeat_server in the access point's config); by default",
    "                        agents beat over UDP (type 513) as the SDKs do, on the same port number when free",
    "  --strict-invite-ms N  play a strict message service: an invited agent (the group service too) joins a",
    "                        session N ms after invite_agent_req, sends invite_agent_ack only then, and",
    "                        session frames sent to it before that are dropped without an answer",
    "  --max-agents-per-source N  room for N agents run from one address (one `acp-group run` with N",
    "                        identities): sockets, sign-ins after a restart and registrations per address",
    "                        raised to fit (the defaults allow 512 connections and 20 new aids per address)",
  ].join("\n"),
  run: async (args, io) => (await import("./server.ts")).serverCommand(args, io),
};

const runSpec: CommandSpec = {
  name: "run",
  summary: "Run the configured agents on the network the config names (never starts one)",
  usage: "--config FILE [--state-dir DIR] [--no-stdin] [--duration-ms N] [--log-level L] [--show-prompts]",
  help: [
    "Signs every enabled identity of the configuration in to its own access point (accessPointUrl,",
    "accessPoint, else acp3.<its domain>; a private CA from network.caFile) and runs its groups there:",
    "a network started with `acp-group server`, or the real one (agentcp.io). It prints the same",
    "transcript and decision lines as `start`, with the configured model (OPENAI_*) or the offline",
    "responder. Lines typed on stdin are posted as the first identity into its first group.",
    "Ctrl-C or SIGTERM saves state and exits 0. Use `start` for the self-contained demo.",
    "",
    "  --config FILE      the configuration (required): `acp-group join --config FILE` writes one",
    "  --state-dir DIR    the state directory (default: stateDir, ACP_GROUP_STATE_DIR, ~/.acp-group/state)",
    "  --no-stdin         do not read lines from stdin",
    "  --duration-ms N    stop after N ms",
    "  --log-level L      structured JSON logs on stderr at debug, info, warn (default) or error",
    "  --show-prompts     print each dispatch's model request as it is sent",
  ].join("\n"),
  run: async (args, io) => (await import("./run.ts")).runCommand(args, io),
};

const joinSpec: CommandSpec = {
  name: "join",
  summary: "Join a group by its link (https://group.<ap>/<group>?code=<invite>)",
  usage: "<link> --identity AID --config FILE [--message TEXT] [--state-dir DIR] [--ca-file CA] [--ap-url URL]\n[--timeout-ms N] [--log-level L]",
  help: [
    "A link with ?code= joins at once (use_invite_code); without one it asks to join (request_join, with --message).",
    "--identity is an aid made by `acp-group id create` (its access point and CA are remembered from there)",
    "or an identity of the config. Once joined, the config file is created, or added to, with everything",
    "`acp-group run --config FILE` needs: the identity, the group, the access point URL and CA file when",
    "they differ from the defaults, and the state dir.",
  ].join("\n"),
  run: async (args, io) => (await import("./join.ts")).joinCommand(args, io),
};

const leaveSpec: CommandSpec = {
  name: "leave",
  summary: "Leave a group (the group service's leave_group); with --config, turn it off for the identity",
  usage: "<group|link> --identity AID [--config FILE] [--state-dir DIR] [--ca-file CA] [--timeout-ms N] [--log-level L]",
  help: [
    "Signs in with the identity (an aid from `acp-group id create`, or an identity of --config) and sends",
    "leave_group to the group's service (the group's accessPoint in the config, else the identity's; a link",
    "names it). The group is told (member_left). With --config the group is turned off for that identity in",
    "the file (identities.<id>.groups.<group>.enabled: false, its other settings kept), so `run` leaves it",
    "out; `join` with the group's link turns it on again. Leaving a group the identity is not in says so and",
    "exits 0.",
  ].join("\n"),
  run: async (args, io) => (await import("./leave.ts")).leaveCommand(args, io),
};

const idSpec: CommandSpec = {
  name: "id",
  summary: "Identities (key + certificate) for the ACP network",
  usage: "create <aid> [--ap DOMAIN | --ap-url URL] [--no-passphrase] | list | show <aid> | import … [--state-dir DIR] [--config FILE]",
  help: ID_HELP,
  run: async (args, io) => (await import("./id.ts")).idCommand(args, io),
};

export const importEvolSpec: CommandSpec = {
  name: "import-evol",
  summary: "Switch from the evol channel (acp-ts): import its identities and convert channels.evol",
  usage:
    "--config FILE [--openclaw-config FILE] [--acp-storage DIR]... [--seed-password TEXT] [--state-dir DIR]\n" +
    "[--ap-url URL] [--ca-file CA] [--force] [--dry-run]",
  help: [
    "Reads channels.evol (or channels.acp) of the OpenClaw config, finds each of its identities in the",
    "official SDK's storage, imports key and certificate into the state dir, and writes FILE: the config",
    "`acp-group run --config FILE` runs (in OpenClaw, the same object goes under channels.acp-group).",
    "Prints what it carried over, what has no equivalent, and whether evol still runs an identity.",
    "Without an OpenClaw config (or without an evol section in it) it imports every identity of the storage.",
    "",
    "  --config FILE           the config to write (an existing one only with --force)",
    "  --openclaw-config FILE  default: OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json",
    "  --acp-storage DIR       the SDK's storage (repeatable; default ~/.acp-storage, then ~/acp)",
    "  --seed-password TEXT    opens keys the evol config gives no seed password for (default: ACP_SEED_PASSWORD,",
    "                          then the SDK's default empty one)",
    "  --state-dir DIR         our store (default: ACP_GROUP_STATE_DIR, ~/.acp-group/state)",
    "  --ap-url URL            the access point, when it is not https://acp3.<domain of the aid> (a local network)",
    "  --ca-file CA            trust this CA (a local network's ca.crt)",
    "  --force                 overwrite --config FILE",
    "  --dry-run               print what would be imported and written; change nothing",
    "",
    "Keys are stored encrypted with ACP_SEED_PASSWORD when it is set; otherwise under the same seed",
    "password that opened them (the SDK's default empty one included, which is said loudly).",
  ].join("\n"),
  run: async (args, io) => (await import("./import-evol.ts")).importEvolCommand(args, io),
};

/** Every command, in the order the general help lists them. Add a row to add a command. */
export const COMMANDS: readonly CommandSpec[] = [startSpec, runSpec, chatSpec, serverSpec, joinSpec, leaveSpec, pairingSpec, replaySpec, inspectSpec, idSpec, importEvolSpec];

const USAGE = renderUsage(COMMANDS);

/** Overwrites one status line on a terminal's stderr; "" clears it. Absent when stderr is not a TTY. */
const terminalProgress = (line: string) => process.stderr.write(line ? `\r${line}\x1b[K` : "\r\x1b[K");

const defaultIo: Io = {
  out: (s) => process.stdout.write(s + "\n"),
  write: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s + "\n"),
  ...(process.stderr.isTTY ? { progress: terminalProgress } : {}),
};

export { UsageError } from "./args.ts";

/**
 * Output piped into a reader that stops early (`acp-group id list | head -1`) ends the command
 * quietly: the closed pipe's EPIPE exits 0 instead of surfacing as an unhandled error and its stack.
 */
export function quietOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") process.exit(0);
      throw err;
    });
  }
}

/** The package's version. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version: string }).version;
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const [command, ...rest] = argv;
  const debug = rest.includes("--debug") || process.env.ACP_GROUP_DEBUG === "1";
  const args = rest.filter((a) => a !== "--debug");
  const spec = COMMANDS.find((c) => c.name === command);
  try {
    if (spec) {
      // `--help` anywhere before `--` wins over every other option and over usage errors.
      const end = args.indexOf("--");
      if ((end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h")) {
        io.out(renderCommandHelp(spec));
        return 0;
      }
      return await spec.run(args, io);
    }
    switch (command) {
      case undefined:
        // No command is a mistake: the usage goes to stderr so `acp-group > out` stays clean.
        io.err(USAGE);
        return 2;
      case "--version":
      case "-V":
      case "version":
        io.out(`acp-group ${packageVersion()}`);
        return 0;
      case "help":
      case "--help":
      case "-h": {
        const about = COMMANDS.find((c) => c.name === rest[0]);
        io.out(about ? renderCommandHelp(about) : USAGE);
        return 0;
      }
      default:
        throw new UsageError(`unknown command \`${command}\` (have: ${COMMANDS.map((c) => c.name).join(", ")})`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`acp-group: ${err.message}\nrun 'acp-group ${spec ? `${spec.name} ` : ""}--help'`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof LogParseError || err instanceof CommandError) {
      io.err(`acp-group: ${err.message}`);
      return 1;
    }
    // A network that cannot be reached: the cause and the fix in one line, whichever command met it.
    const unreachable = explainUnreachable(err);
    if (unreachable !== undefined) {
      io.err(`acp-group: ${unreachable}`);
      if (debug && (err as Error).stack) io.err((err as Error).stack!);
      return 1;
    }
    const e = err as Error & { code?: string };
    io.err(`acp-group: ${e.message ?? String(err)}${e.code ? ` (${e.code})` : ""}`);
    if (debug && e.stack) io.err(e.stack);
    return 1;
  }
}
