// `acp-group chat --to <aid> --identity AID`: a person's direct conversation with an agent (or
// anyone) on any ACP network. Prints the conversation's history — kept by this command in the
// state directory, since the network keeps none — then each line as it comes, and sends each
// --say and each typed or piped line in the SDK's format: on the agent's session, or a new one.
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { errorFields } from "../log.ts";
import type { NetworkAgent } from "../network/index.ts";
import { encodeSafeName } from "../state/safe-name.ts";
import type { Logger } from "../types.ts";
import type { Io } from "./args.ts";
import { formatDirectRows } from "./transcript.ts";

interface Line {
  at: number;
  from: string;
  text: string;
}

/** The history of (me, peer): one JSON line per message, 0600. */
function historyFile(stateDir: string, me: string, peer: string): string {
  return join(stateDir, "direct-history", encodeSafeName(me.toLowerCase()), `${encodeSafeName(peer.toLowerCase())}.jsonl`);
}

function readHistory(file: string, count: number): Line[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const out: Line[] = [];
  for (const raw of text.split("\n").slice(-count - 1)) {
    try {
      const l = JSON.parse(raw) as Partial<Line>;
      if (typeof l.at === "number" && typeof l.from === "string" && typeof l.text === "string") out.push({ at: l.at, from: l.from, text: l.text });
    } catch {
      // A torn last line (killed mid-write) is skipped.
    }
  }
  return out.slice(-count);
}

export async function chatDirect(p: {
  io: Io;
  agent: NetworkAgent;
  me: string;
  peer: string;
  stateDir: string;
  say: readonly string[];
  historyCount: number;
  readStdin: boolean;
  stdin: NodeJS.ReadableStream | undefined;
  /** Columns to wrap at (transcript.ts). */
  width: () => number;
  timeoutMs: number;
  logger: Logger;
  stopped: Promise<void>;
  isStopped: () => boolean;
}): Promise<number> {
  const { io, agent, me, peer } = p;
  const file = historyFile(p.stateDir, me, peer);
  const mine = (from: string) => from.toLowerCase() === me.toLowerCase();
  const print = (l: Line) =>
    io.out(formatDirectRows({ time: new Date(l.at).toISOString().slice(11, 19), from: l.from, to: mine(l.from) ? peer : me, marker: mine(l.from) ? "you" : undefined, content: l.text, width: p.width() }).join("\n"));
  const keep = (l: Line) => {
    try {
      mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 });
      appendFileSync(file, `${JSON.stringify(l)}\n`, { mode: 0o600 });
    } catch (err) {
      p.logger.log("warn", "chat.history-write-failed", { file, ...errorFields(err) });
    }
  };
  // Read before anything new is kept; lines arriving before it is printed wait their turn.
  const history = readHistory(file, p.historyCount);
  let live = false;
  const early: Line[] = [];
  const unsubscribe = agent.onDirect((m) => {
    if (m.peer.toLowerCase() !== peer.toLowerCase()) return;
    const l = { at: m.at, from: m.peer, text: m.text };
    keep(l);
    if (live) print(l);
    else early.push(l);
  });
  let connectTimer: ReturnType<typeof setTimeout> | undefined;
  let rl: ReturnType<typeof createInterface> | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      connectTimer = setTimeout(() => reject(new Error(`not signed in within ${p.timeoutMs} ms`)), p.timeoutMs);
    });
    try {
      await Promise.race([agent.ready, timeout, p.stopped]);
    } finally {
      clearTimeout(connectTimer);
    }
    if (p.isStopped()) return 0;
    io.out(`${me} → ${peer} (direct)`);
    for (const l of history) print(l);
    for (const l of early.splice(0)) print(l);
    live = true;

    let sending: Promise<unknown> = Promise.resolve();
    const send = (text: string) => {
      sending = sending.then(async () => {
        try {
          await agent.sendDirect({ peer, text });
          const l = { at: Date.now(), from: me, text };
          keep(l);
          print(l);
        } catch (err) {
          io.err(`could not send to ${peer}: ${err instanceof Error ? err.message : String(err)}`);
          p.logger.log("warn", "chat.send-failed", { peer, ...errorFields(err) });
        }
      });
    };
    for (const text of p.say) send(text);
    if (p.readStdin) {
      const input = p.stdin ?? process.stdin;
      if (p.stdin || process.stdin.isTTY) io.out(`type a line to send it to ${peer} as ${me}; Ctrl-C to leave`);
      rl = createInterface({ input });
      rl.on("line", (line) => {
        const t = line.trim();
        if (t && !p.isStopped()) send(t);
      });
    }
    await p.stopped;
    await sending;
    return 0;
  } finally {
    unsubscribe();
    rl?.close();
  }
}
