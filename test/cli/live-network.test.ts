// The whole path a user takes, as separate processes started from the CLI (bin/acp-group.mjs) on
// real sockets: `acp-group server --tls` in one state dir; `id create` → `join <link>` → `run` for
// dave in a second; a member speaking the official SDK's sequence asks "Dave, are you there?" and
// receives Dave's answer; `acp-group chat <link>` as erin in a third state dir shows both lines.
// Inside each child, names under the test's domain resolve to 127.0.0.1 as DNS would
// (test/support/resolve-loopback.mjs). Dave answers with the offline responder: no hosted LLM here.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectSdkMember, type SdkMember } from "../support/sdk-member.ts";
import { loopbackLookup } from "../network/support.ts";
import { waitFor } from "../support/wait-for.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin", "acp-group.mjs");
const HOOK = join(ROOT, "test", "support", "resolve-loopback.mjs");
const DOMAIN = "dtest.example";

interface Proc {
  child: ChildProcess;
  out: string[];
  err: string[];
  exited: Promise<number | null>;
}

const procs: Proc[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}): Proc {
  const child = spawn(process.execPath, ["--import", HOOK, BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ACP_TEST_LOOPBACK_DOMAIN: DOMAIN, OPENAI_BASE_URL: "", OPENAI_API_KEY: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const p: Proc = { child, out: [], err: [], exited: new Promise((r) => child.once("exit", (code) => r(code))) };
  const lines = (sink: string[]) => {
    let rest = "";
    return (chunk: Buffer) => {
      const parts = (rest + chunk.toString()).split("\n");
      rest = parts.pop()!;
      sink.push(...parts);
    };
  };
  child.stdout!.on("data", lines(p.out));
  child.stderr!.on("data", lines(p.err));
  procs.push(p);
  return p;
}

/** Waits for `probe` (the processes' output, which they append as it comes); on a timeout the output is in the error. */
function until<T>(probe: () => T | undefined, what: string, p: Proc[], timeoutMs = 30_000): Promise<T> {
  return waitFor(probe, () => `${what}\n${p.map((x) => [...x.out, ...x.err].join("\n")).join("\n---\n")}`, timeoutMs, 50);
}

async function finished(p: Proc): Promise<string[]> {
  const code = await p.exited;
  if (code !== 0) throw new Error(`exit ${code}\n${[...p.out, ...p.err].join("\n")}`);
  return p.out;
}

describe("server → id create → join → run, an SDK member and chat: separate CLI processes on 127.0.0.1", () => {
  it("the SDK member asks Dave, receives his answer, and erin's `chat` shows both lines", async () => {
    const base = mkdtempSync(join(tmpdir(), "acp-live-"));
    dirs.push(base);
    const [s1, s2, s3] = ["s1", "s2", "s3"].map((d) => join(base, d)) as [string, string, string];

    const server = cli(["server", "--tls", "--domain", DOMAIN, "--port", "0", "--state-dir", s1]);
    await until(() => server.out.find((l) => l.startsWith("sdk domain:")), "the server's banner", [server]);
    const ap = server.out.find((l) => l.startsWith("access point: "))!.slice("access point: ".length);
    const ca = server.out.find((l) => l.startsWith("ca: "))!.slice("ca: ".length);
    const link = server.out.find((l) => l.startsWith("join lobby: "))!.slice("join lobby: ".length);
    // Printed by address: it resolves on every machine and the certificate covers it.
    expect(ap).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);

    // Dave: three commands, no hand editing.
    const daveConfig = join(s2, "dave.json");
    await finished(cli(["id", "create", `dave.${DOMAIN}`, "--ap-url", ap, "--ca-file", ca, "--no-passphrase"], { ACP_GROUP_STATE_DIR: s2 }));
    const joined = await finished(cli(["join", link, "--identity", `dave.${DOMAIN}`, "--config", daveConfig], { ACP_GROUP_STATE_DIR: s2 }));
    expect(joined[0]).toBe(`dave.${DOMAIN} → lobby on group.${DOMAIN}: joined`);
    expect(joined[1]).toMatch(/^created .*dave\.json: identity dave \(dave\.dtest\.example\), group lobby, network\.caFile .*, stateDir .*; start it with: npx acp-group run --config /);
    expect(JSON.parse(readFileSync(daveConfig, "utf8"))).toEqual({
      identities: { dave: { aid: `dave.${DOMAIN}`, accessPointUrl: ap } },
      groups: { lobby: {} },
      network: { caFile: ca },
      stateDir: s2,
    });
    const run = cli(["run", "--config", daveConfig, "--no-stdin"]);
    await until(() => run.out.find((l) => l.startsWith("agents online:")), "dave online", [run, server]);
    expect(run.out).toContain(`agents online: dave (dave.${DOMAIN}) in lobby`);

    // A member on the official SDK's sequence, in this (test) process.
    let member: SdkMember | undefined;
    let answer: string | undefined;
    try {
      member = await connectSdkMember({ base: ap, aid: `frank.${DOMAIN}`, caPem: readFileSync(ca, "utf8"), lookup: loopbackLookup, groupService: `group.${DOMAIN}` });
      const url = new URL(link);
      expect((await member.groupRequest("use_invite_code", { group_id: "lobby", params: { code: url.searchParams.get("code") } })).code).toBe(0);
      expect((await member.groupRequest("register_online")).code).toBe(0);
      expect((await member.groupRequest("send_message", { group_id: "lobby", params: { content: "Dave, are you there?" } })).code).toBe(0);
      // Dave's answer arrives as a push to the member (what the SDK's message handler receives).
      answer = await until(
        () => {
          for (const f of member!.frames) {
            if (f.cmd !== "session_message") continue;
            const payload = JSON.parse(f.data.message as string) as { action?: string; data?: { messages?: Array<{ sender: string; content: string }> } & { sender?: string; content?: string } };
            const messages = payload.data?.messages ?? (payload.data?.sender ? [payload.data as { sender: string; content: string }] : []);
            const hit = messages.find((m) => m.sender === `dave.${DOMAIN}`);
            if (hit) return hit.content;
          }
          return undefined;
        },
        "Dave's answer pushed to the SDK member",
        [run, server],
      );
      // The offline responder quotes the question and ends with a reference taken from its text.
      expect(answer).toMatch(new RegExp(`^\\[offline responder\\] heard frank\\.${DOMAIN.replaceAll(".", "\\.")}: "Dave, are you there\\?" · ref [0-9a-f]{8}-[0-9a-f]{8}$`));
    } finally {
      member?.close();
    }
    expect(run.out.some((l) => / \[lobby\] #\d+ frank\.dtest\.example: Dave, are you there\?$/.test(l))).toBe(true);
    // The decision line is printed once the send is done, which may be after the member already has the answer.
    expect(await until(() => run.out.find((l) => / dave \[lobby\] dispatch #\d+ mention .* → sent /.test(l)), "dave's decision line", [run, server])).toBeTruthy();

    // Erin, a person in a third state dir, joins by the link and reads the history.
    await finished(cli(["id", "create", `erin.${DOMAIN}`, "--ap-url", ap, "--ca-file", ca, "--no-passphrase"], { ACP_GROUP_STATE_DIR: s3 }));
    const chat = await finished(cli(["chat", link, "--identity", `erin.${DOMAIN}`, "--no-stdin", "--duration-ms", "300"], { ACP_GROUP_STATE_DIR: s3 }));
    expect(chat[0]).toBe(`erin.${DOMAIN} in [lobby] on group.${DOMAIN}`);
    expect(chat.slice(1).map((l) => l.replace(/^\d\d:\d\d:\d\d \[lobby\] #\d+ /, ""))).toEqual([
      `frank.${DOMAIN}: Dave, are you there?`,
      `dave.${DOMAIN} (agent): ${answer}`,
    ]);

    // Ctrl-C's sibling: SIGTERM saves state and exits 0.
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(run.out.slice(-2)).toEqual(["stopping (SIGTERM) — saving state", "stopped"]);
    expect(run.err).toEqual([]);
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  }, 90_000);
});
