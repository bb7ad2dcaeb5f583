// The command line's direct messages, in process against the local network (real sockets):
// `chat --to` (a person's DM, its history kept across runs), `pairing approve|list|revoke`
// (real files), and a running agent answering its owner while a stranger is refused.
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createScriptedBackend } from "../../src/backends/deterministic.ts";
import { chatCommand } from "../../src/cli/chat.ts";
import { main } from "../../src/cli/index.ts";
import { runCommand } from "../../src/cli/run.ts";
import { startIdentity } from "../../src/runtime/identity.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { createPairingStore } from "../../src/state/pairing-store.ts";
import { startRecorded, tempDir, waitFor } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});
const io = () => {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) } };
};
const noTime = (l: string) => l.replace(/^\d\d:\d\d:\d\d /, "");

describe("acp-group chat --to (a person's direct message)", () => {
  it("the owner's DM is answered in its session; the history of the conversation is shown first next time; a stranger's DM is refused (dave's log says why) and gets no answer", async () => {
    const d = tempDir("cli-dm");
    dirs.push(d);
    const dev = await startDevNetwork({ stateDir: d.dir, groups: { lobby: { members: { "dave.acp.local": {} } } }, rateLimit: null });
    try {
      const daveIdentity = await dev.identity("dave.acp.local");
      await dev.identity("owner.acp.local");
      await dev.identity("stranger.acp.local");
      const config = parseChannelConfig({ stateDir: join(d.dir, "dave"), identities: { dave: { aid: "dave.acp.local", owner: "owner.acp.local" } }, groups: { lobby: {} } });
      const logger = createMemoryLogger();
      const dave = startRecorded({ config, identityId: "dave", logger, backend: createScriptedBackend({ mode: "mention", replyText: "Loud and clear." }), connect: ({ logger: l }) => dev.connect(daveIdentity, l) });
      await dave.ready;
      const personConfig = (who: string) => {
        const file = join(d.dir, `${who}.json`);
        writeFileSync(file, JSON.stringify({ stateDir: join(d.dir, "local-network"), identities: { [who]: { aid: `${who}.acp.local`, accessPointUrl: dev.net.localUrl } } }));
        return file;
      };
      const chat = (who: string, say: string[]) => {
        const r = io();
        const stop = new AbortController();
        const done = chatCommand(["--to", "dave.acp.local", "--identity", who, "--config", personConfig(who), ...say.flatMap((t) => ["--say", t]), "--no-stdin"], r.io, { signal: stop.signal });
        return { ...r, leave: async () => (stop.abort(), done) };
      };

      const first = chat("owner", ["Dave, can you hear me?"]);
      await waitFor(() => first.out.some((l) => l.includes("dave.acp.local → owner.acp.local: Loud and clear.")), "dave's answer");
      expect(await first.leave()).toBe(0);
      expect(first.out.map(noTime)).toEqual(["owner.acp.local → dave.acp.local (direct)", "[dm] owner.acp.local (you) → dave.acp.local: Dave, can you hear me?", "[dm] dave.acp.local → owner.acp.local: Loud and clear."]);
      expect(dave.decisions.map((x) => [x.conversation, x.outcome.kind])).toEqual([[{ kind: "direct", peer: "owner.acp.local" }, "sent"]]);
      // Nothing of it in the group.
      expect(dev.service.history("lobby")).toEqual([]);

      const second = chat("owner", []);
      await waitFor(() => second.out.length === 3, "the history");
      expect(await second.leave()).toBe(0);
      expect(second.out.map(noTime)).toEqual(["owner.acp.local → dave.acp.local (direct)", "[dm] owner.acp.local (you) → dave.acp.local: Dave, can you hear me?", "[dm] dave.acp.local → owner.acp.local: Loud and clear."]);
      expect(statSync(join(d.dir, "local-network", "direct-history", "owner.acp.local", "dave.acp.local.jsonl")).mode & 0o777).toBe(0o600);

      const stranger = chat("stranger", ["Dave, can you hear me?"]);
      await waitFor(() => logger.entries.some((e) => e.event === "direct.refused"), "dave refuses the stranger");
      expect(await stranger.leave()).toBe(0);
      expect(logger.entries.filter((e) => e.event === "direct.refused").map((e) => [e.fields.peer, e.fields.reason])).toEqual([["stranger.acp.local", "not-allowed"]]);
      expect(stranger.out.map(noTime)).toEqual(["stranger.acp.local → dave.acp.local (direct)", "[dm] stranger.acp.local (you) → dave.acp.local: Dave, can you hear me?"]);
      expect(dave.decisions).toHaveLength(1);
      await dave.close();
    } finally {
      await dev.close();
    }
  }, 60_000);

  it("--to and a link together, or --to without an aid, are usage errors", async () => {
    const a = io();
    expect(await main(["chat", "https://group.acp.local/lobby?code=x", "--to", "dave.acp.local", "--identity", "erin.acp.local"], a.io)).toBe(2);
    expect(a.err[0]).toBe("acp-group: expected either `--to AID` (a direct conversation) or a link or group, not both\nrun 'acp-group chat --help'");
    const b = io();
    expect(await main(["chat", "--to", "dave", "--identity", "erin.acp.local"], b.io)).toBe(2);
    expect(b.err[0]).toBe("acp-group: expected `--to` an agent id such as dave.agentcp.io, got `dave`\nrun 'acp-group chat --help'");
  });
});

describe("acp-group pairing", () => {
  it("list shows the waiting codes, approve lets the sender in, revoke takes them out; an unknown code is an error naming it", async () => {
    const d = tempDir("cli-pairing");
    dirs.push(d);
    const store = createPairingStore({ dir: join(d.dir, "pairing"), random: (n) => Buffer.alloc(n, 7) });
    const asked = await store.request({ identityId: "dave", aid: "dave.acp.local", peer: "erin.acp.local", now: Date.now() });
    expect(asked.reply).toContain("Pairing code HHHHHHHH");
    const run = async (...args: string[]) => {
      const r = io();
      const code = await main(["pairing", ...args, "--identity", "dave.acp.local", "--state-dir", d.dir], r.io);
      return { code, out: r.out, err: r.err };
    };
    const listed = await run("list");
    expect(listed.out).toEqual([`dave.acp.local · pairing in ${join(d.dir, "pairing")}`, "waiting:", "  HHHHHHHH  erin.acp.local  (expires in 60 min)", "approved: none"]);
    expect(await run("approve", "NOPE2345")).toMatchObject({ code: 1, err: ["acp-group: no pairing request with code NOPE2345 for dave.acp.local (unknown, or older than an hour: the sender gets a new code when they write again) (PAIRING_CODE_UNKNOWN)"] });
    expect(await run("approve", "hhhhhhhh")).toMatchObject({ code: 0, out: ["approved: erin.acp.local may now message dave.acp.local directly"] });
    expect(store.isApproved({ identityId: "dave", aid: "dave.acp.local", peer: "Erin.acp.local" })).toBe(true);
    expect(await run("revoke", "erin.acp.local")).toMatchObject({ code: 0, out: ["revoked: erin.acp.local is no longer approved for dave.acp.local"] });
    expect(await run("revoke", "erin.acp.local")).toMatchObject({ code: 1 });
    expect(await run("frobnicate")).toMatchObject({ code: 2 });
  });
});

describe("an identity for direct messages only (no group)", () => {
  it("with direct messages disabled too it has nothing to do: refused naming both, before anything connects", () => {
    const d = tempDir("dm-only-disabled");
    dirs.push(d);
    const config = parseChannelConfig({ stateDir: d.dir, identities: { dave: { aid: "dave.acp.local", dmPolicy: "disabled" } } });
    const connect = () => {
      throw new Error("must not connect");
    };
    expect(() => startIdentity({ config, identityId: "dave", backend: createScriptedBackend({ mode: "mention", replyText: "-" }), connect })).toThrow(
      expect.objectContaining({ name: "RuntimeError", code: "NO_GROUPS", message: "identities.dave: no enabled group and direct messages disabled (add a group under groups or identities.dave.groups, or set dmPolicy)" }),
    );
  });

  it("`run` starts it, says it takes direct messages only, and it answers its owner's DM", async () => {
    const d = tempDir("cli-dm-only");
    dirs.push(d);
    const dev = await startDevNetwork({ stateDir: d.dir, groups: { lobby: { members: {} } }, rateLimit: null });
    try {
      await dev.identity("dave.acp.local");
      await dev.identity("owner.acp.local");
      const file = (who: string, body: object) => {
        const f = join(d.dir, `${who}.json`);
        writeFileSync(f, JSON.stringify({ stateDir: join(d.dir, "local-network"), ...body }));
        return f;
      };
      // No `groups` at all, and none under the identity.
      const daveConfig = file("dave", { identities: { dave: { aid: "dave.acp.local", accessPointUrl: dev.net.localUrl, owner: "owner.acp.local" } } });
      const dave = io();
      const stopDave = new AbortController();
      const run = runCommand(["--config", daveConfig, "--no-stdin"], dave.io, { signal: stopDave.signal });
      await waitFor(() => dave.out.includes("agents online: dave (dave.acp.local), direct messages only"), "dave online", 15_000);

      const owner = io();
      const stopOwner = new AbortController();
      const chat = chatCommand(["--to", "dave.acp.local", "--identity", "owner", "--config", file("owner", { identities: { owner: { aid: "owner.acp.local", accessPointUrl: dev.net.localUrl } } }), "--say", "Dave, can you hear me?", "--no-stdin"], owner.io, { signal: stopOwner.signal });
      await waitFor(() => owner.out.some((l) => l.includes("[dm] dave.acp.local → owner.acp.local: ")), "dave's answer", 15_000);
      stopOwner.abort();
      expect(await chat).toBe(0);
      stopDave.abort();
      expect(await run).toBe(0);
      expect(dave.out.slice(-2)).toEqual(["stopping (aborted) — saving state", "stopped"]);
      expect(dave.out.filter((l) => l.includes("dispatch #")).map((l) => l.trim())).toEqual(["↳ dave [dm owner.acp.local] dispatch #1 direct · 1 msg(s) · reply_type normal · budget 0.00 → sent normal"]);
      expect(dev.service.history("lobby")).toEqual([]);
    } finally {
      await dev.close();
    }
  }, 60_000);
});
