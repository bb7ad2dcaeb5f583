// A command on a real terminal, as a person runs it: tmux gives it a pseudo-terminal of a fixed
// size, the script reads the screen and types keys. Used for the host's guided (interactive)
// setup, which only runs when its input is a terminal. Each terminal has its own tmux server
// (socket), so nothing here touches a user's tmux sessions; close() ends that server.
import { spawnSync } from "node:child_process";
import { sleep } from "./host-env.ts";

export interface Terminal {
  /** What the terminal shows now, with up to 2,000 lines of scroll-back, trailing blank lines dropped. */
  screen(): string;
  /** Waits until the screen matches; throws with the screen after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Types text literally (no key names). */
  type(text: string): void;
  /** Presses named keys in order (`Enter`, `Up`, `Down`, `Right`, `BSpace`, …). */
  press(...keys: string[]): void;
  /** The command's exit code once it has ended, else undefined. */
  exitCode(): number | undefined;
  close(): void;
}

const EXIT_MARK = /\[command exited (\d+)\]/;

/** Fails at once with the install command where tmux is missing (never a silent skip). */
export function requireTmux(): void {
  const probe = spawnSync("tmux", ["-V"], { encoding: "utf8" });
  if (probe.status !== 0) throw new Error("tmux is needed to drive the guided setup on a terminal: apt-get install -y tmux");
}

export function openTerminal(params: { argv: string[]; env: NodeJS.ProcessEnv; name: string; cols?: number; rows?: number }): Terminal {
  requireTmux();
  const socket = `acp-${params.name}-${process.pid}`;
  const tmux = (...args: string[]) => {
    const res = spawnSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { env: params.env, encoding: "utf8" });
    if (res.status !== 0) throw new Error(`tmux ${args[0]}: ${res.stderr.trim() || `exit ${res.status}`}`);
    return res.stdout;
  };
  const quoted = params.argv.map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(" ");
  // The pane stays after the command ends (the sleep), so its last screen and exit code can be read.
  const shell = `${quoted}; echo "[command exited $?]"; sleep 3600`;
  // A new server per terminal: the command gets this process's env as given (tmux copies the
  // server's environment into the pane).
  tmux("new-session", "-d", "-s", "t", "-x", String(params.cols ?? 160), "-y", String(params.rows ?? 50), shell);
  const screen = () => tmux("capture-pane", "-p", "-t", "t", "-S", "-2000").replace(/\s+$/, "");
  return {
    screen,
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = screen();
        if (pattern.test(s)) return s;
        const ended = EXIT_MARK.exec(s);
        if (ended || Date.now() > deadline) {
          throw new Error(`${ended ? `the command ended (exit ${ended[1]})` : `${timeoutMs} ms passed`} before the terminal showed ${pattern}; last screen:\n${s.split("\n").slice(-40).join("\n")}`);
        }
        await sleep(150);
      }
    },
    type: (text) => void tmux("send-keys", "-t", "t", "-l", text),
    press: (...keys) => {
      for (const k of keys) tmux("send-keys", "-t", "t", k);
    },
    exitCode() {
      const m = EXIT_MARK.exec(screen());
      return m ? Number(m[1]) : undefined;
    },
    close() {
      spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    },
  };
}

/**
 * In the prompt on screen (the host marks the current choice `●`, the others `○`: a list one per
 * line, or a yes/no on one line as `● Yes / ○ No`), the key presses that move from the current
 * choice to the one whose label contains `label`.
 */
export function movesTo(screen: string, label: string): string[] {
  const lines = screen.split("\n");
  // The active prompt is the last one drawn: read its choices from the last `◆` down.
  const start = lines.findLastIndex((l) => l.includes("◆"));
  const rows = lines.slice(start + 1).filter((l) => /[●○]/.test(l));
  const inline = rows.length === 1;
  const choices = inline ? rows[0]!.split(" / ") : rows;
  const current = choices.findIndex((l) => l.includes("●"));
  const target = choices.findIndex((l) => l.includes(label));
  if (current < 0 || target < 0) throw new Error(`no choice "${label}" in the prompt on screen:\n${lines.slice(start).join("\n")}`);
  const n = target - current;
  const key = inline ? (n > 0 ? "Right" : "Left") : n > 0 ? "Down" : "Up";
  return Array.from({ length: Math.abs(n) }, () => key);
}
