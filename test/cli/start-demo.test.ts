// The README demo as a user runs it, in a child process: `start --fresh` twice gives the same
// answer (no state carried over, the throwaway dir removed at exit), `--show-prompts` prints the
// request, and SIGTERM is named as such when it stops the group.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NO_MODEL_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OPENAI_")));

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs the CLI; `onOut` sees stdout as it grows and may signal the child. */
function runBin(args: string[], onOut?: (out: string, kill: (s: NodeJS.Signals) => void) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/acp-group.mjs", ...args], { cwd: ROOT, env: NO_MODEL_ENV, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      onOut?.(out, (s) => child.kill(s));
    });
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

const stateDirOf = (out: string) => /· state: (\S+)/.exec(out)?.[1];

describe("start --fresh (the README demo, run twice)", () => {
  it("answers the same both times, prints the request with --show-prompts, and removes its state dir", async () => {
    // Stopped once Alice's answer is in (--duration-ms only bounds a run that goes wrong).
    const args = ["start", "--fresh", "--no-stdin", "--show-prompts", "--say", "Alice, can you check the deploy?", "--duration-ms", "25000"];
    const untilAnswered = () => {
      let sent = false;
      return (out: string, kill: (s: NodeJS.Signals) => void) => {
        if (!sent && out.includes("(agent): [offline responder] heard sam.acp.local")) {
          sent = true;
          kill("SIGINT");
        }
      };
    };
    const runs = [await runBin(args, untilAnswered()), await runBin(args, untilAnswered())];
    for (const run of runs) {
      expect(run.err).toBe("");
      expect(run.code).toBe(0);
      expect(run.out).toMatch(/#1 sam\.acp\.local: Alice, can you check the deploy\?/);
      expect(run.out).toMatch(/alice \[lobby\] dispatch #1 mention .* → sent short/);
      expect(run.out).toContain(`[offline responder] heard sam.acp.local: "Alice, can you check the deploy?"`);
      expect(run.out).not.toContain("duplicate-of-recent-reply");
      expect(run.out).toMatch(/⇢ alice \[lobby\] dispatch #1 request as sent:\n\s+\[system\]\n/);
      const stateDir = stateDirOf(run.out);
      expect(stateDir).toMatch(/acp-group-fresh-/);
      expect(existsSync(stateDir!)).toBe(false);
    }
    expect(stateDirOf(runs[0]!.out)).not.toBe(stateDirOf(runs[1]!.out));
  }, 60_000);
});

describe("start: a question to the room (three agents, the offline responder)", () => {
  it("is left to people first, then gets one answer: the agent first by its rank answers, the other two yield to it", async () => {
    const args = ["start", "--fresh", "--no-stdin", "--say", "anyone know why apt hangs on update?", "--duration-ms", "25000"];
    let sent = false;
    // The demo config leaves an open question to people for 5 s, then the agents take it in turn
    // over 4 s (orphans). Stopped once all three agents have decided on the orphaned question.
    const run = await runBin(args, (out, kill) => {
      if (!sent && (out.match(/↳ \w+ \[lobby\] dispatch #2 orphan /g) ?? []).length === 3) {
        sent = true;
        kill("SIGINT");
      }
    });
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/#1 sam\.acp\.local: anyone know why apt hangs on update\?/);
    expect(run.out.match(/\(agent\): \[offline responder\]/g)).toHaveLength(1);
    expect(run.out.match(/dispatch #1 normal .* → skipped: left-to-people \(1\)/g)).toHaveLength(3);
    expect(run.out.match(/dispatch #2 orphan .* → sent short/g)).toHaveLength(1);
    expect(run.out.match(/dispatch #2 orphan .* → skipped: answered-by-other \((after-delay )?1:by:\w+\.acp\.local\)/g)).toHaveLength(2);
  }, 60_000);
});

describe("start: signals", () => {
  it("SIGTERM stops cleanly and says SIGTERM", async () => {
    let sent = false;
    const run = await runBin(["start", "--fresh", "--no-stdin"], (out, kill) => {
      if (!sent && out.includes("agents online")) {
        sent = true;
        kill("SIGTERM");
      }
    });
    expect(run.code).toBe(0);
    expect(run.out).toContain("stopping (SIGTERM) — saving state");
    expect(run.out).toMatch(/stopped\n$/);
    expect(existsSync(stateDirOf(run.out)!)).toBe(false);
  }, 20_000);
});
