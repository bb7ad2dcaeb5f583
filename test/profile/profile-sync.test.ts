// Publishing an identity's agent.md to the local network's profile host (real node:http server on
// 127.0.0.1, reached through the loopback fetch), with the "already published" state in real files.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { identitySchema } from "../../src/config/schema.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { parseAgentMd } from "../../src/profile/agent-md.ts";
import { describePublishedProfile, publishProfileIfChanged, profileStateFile, readPublishedProfile, resolveProfileText } from "../../src/profile/profile-sync.ts";
import { agentMdUrl, fetchAgentMd, publishAgentMd, type FetchLike } from "../../src/profile/publish.ts";
import { createMemoryAgentMdStore, handleAgentMdRequest } from "../../src/server/agent-md-store.ts";
import { createAgentMdFetch } from "../../src/profile/agent-md-fetch.ts";

const TOKENS: Record<string, string> = { "alice.agentcp.io": "tok-alice", "stranger.agentcp.io": "tok-stranger" };

let server: Server;
let store: ReturnType<typeof createMemoryAgentMdStore>;
let fetch: FetchLike;
let posts: number;
let dir: string;

beforeEach(async () => {
  store = createMemoryAgentMdStore();
  posts = 0;
  server = createServer((req, res) => {
    if (req.method === "POST") posts++;
    void handleAgentMdRequest(req, res, { verifyToken: (aid, token) => TOKENS[aid] === token, store });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  fetch = createAgentMdFetch({ via: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  dir = mkdtempSync(join(tmpdir(), "profile-sync-"));
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const alice = identitySchema.parse({ aid: "alice.agentcp.io", name: "Alice", persona: "You are Alice, a backend engineer. Be brief.", profile: { tags: ["ops"] } });

function sync(identity = alice, token: string | undefined = "tok-alice", logger = createMemoryLogger()) {
  return publishProfileIfChanged({ identityId: "alice", identity, token, stateDir: dir, fetch, logger, now: () => 1_000, version: "0.1.0" });
}

describe("publishProfileIfChanged", () => {
  it("publishes once, reads back what was published, and does not republish an unchanged profile", async () => {
    const logger = createMemoryLogger();
    expect(await sync(alice, "tok-alice", logger)).toMatchObject({ action: "published", source: "generated" });
    const back = await fetchAgentMd({ aid: "alice.agentcp.io", fetch });
    expect(back.ok).toBe(true);
    if (!back.ok) return;
    expect(back.profile).toMatchObject({ aid: "alice.agentcp.io", name: "Alice", type: "agent", version: "0.1.0", description: "You are Alice, a backend engineer.", tags: ["ops"] });
    expect(logger.entries.map((e) => [e.level, e.event])).toEqual([["info", "profile.published"]]);
    // The state file remembers hash and text (for `id show`).
    const state = readPublishedProfile(dir, "alice");
    expect(state).toMatchObject({ version: 1, aid: "alice.agentcp.io", publishedAt: 1_000, text: back.text });
    expect(profileStateFile(dir, "alice")).toBe(join(dir, "alice", "profile.json"));

    // Next start: same text → nothing sent.
    expect(await sync()).toEqual({ action: "unchanged", hash: state!.hash });
    expect(posts).toBe(1);
  });

  it("republishes when the profile changes (new description)", async () => {
    await sync();
    const changed = identitySchema.parse({ ...alice, profile: { description: "On call this week.", tags: ["ops"] } });
    expect(await sync(changed)).toMatchObject({ action: "published" });
    expect(posts).toBe(2);
    expect(parseAgentMd(store.get("alice.agentcp.io")!).description).toBe("On call this week.");
  });

  it("publishes a configured file as is", async () => {
    const file = join(dir, "alice.md");
    const text = "---\naid: alice.agentcp.io\nname: Alice\ntype: agent\ntags: [custom]\n---\n\n# Alice\n\nHand-written.\n";
    writeFileSync(file, text);
    const withFile = identitySchema.parse({ aid: "alice.agentcp.io", profile: { file } });
    expect(await sync(withFile)).toMatchObject({ action: "published", source: "file" });
    expect(store.get("alice.agentcp.io")).toBe(text);
  });

  it("an invalid file, a refused token, a dead server or no token: one warn line each, never a throw, nothing recorded", async () => {
    const bad = join(dir, "bad.md");
    writeFileSync(bad, "no front matter");
    const cases: Array<[ReturnType<typeof identitySchema.parse>, string | undefined, string]> = [
      [identitySchema.parse({ aid: "alice.agentcp.io", profile: { file: bad } }), "tok-alice", "invalid-file"],
      [alice, "tok-stranger", "publish-failed"],
      // An empty token (sign-in gave none) counts as no token.
      [alice, "", "no-token"],
    ];
    for (const [identity, token, reason] of cases) {
      const logger = createMemoryLogger();
      expect(await sync(identity, token, logger)).toEqual({ action: "skipped", reason });
      expect(logger.entries.map((e) => [e.level, e.event])).toEqual([["warn", "profile.publish-failed"]]);
    }
    // Nothing listens on the port any more.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const logger = createMemoryLogger();
    expect(await sync(alice, "tok-alice", logger)).toEqual({ action: "skipped", reason: "publish-failed" });
    expect(logger.entries).toHaveLength(1);
    expect(logger.entries[0]).toMatchObject({ level: "warn", event: "profile.publish-failed", fields: { aid: "alice.agentcp.io", reason: "network" } });
    expect(JSON.stringify(logger.entries)).not.toContain("tok-alice");
    expect(readPublishedProfile(dir, "alice")).toBeUndefined();
    server = createServer().listen(0, "127.0.0.1");
  });

  it("`publish: false` sends nothing", async () => {
    expect(await sync(identitySchema.parse({ aid: "alice.agentcp.io", profile: { publish: false } }))).toEqual({ action: "skipped", reason: "disabled" });
    expect(posts).toBe(0);
  });

  it("a corrupt state file costs one extra publish, nothing more", async () => {
    await sync();
    writeFileSync(profileStateFile(dir, "alice"), "{torn");
    expect(await sync()).toMatchObject({ action: "published" });
    expect(JSON.parse(readFileSync(profileStateFile(dir, "alice"), "utf8"))).toMatchObject({ aid: "alice.agentcp.io" });
  });
});

describe("publishAgentMd", () => {
  it("sends POST https://<aid>/agent.md with text/markdown and the bearer token", async () => {
    const seen: unknown[] = [];
    const recording: FetchLike = async (url, init) => {
      seen.push({ url, method: init.method, headers: init.headers, body: init.body });
      return { ok: true, status: 204, text: async () => "" };
    };
    expect(await publishAgentMd({ aid: "alice.agentcp.io", text: "---\ntype: agent\n---\n", token: "t1", fetch: recording })).toEqual({ ok: true, status: 204 });
    expect(seen).toEqual([
      { url: "https://alice.agentcp.io/agent.md", method: "POST", headers: { "Content-Type": "text/markdown", Authorization: "Bearer t1" }, body: "---\ntype: agent\n---\n" },
    ]);
    expect(agentMdUrl("bob.agentcp.io")).toBe("https://bob.agentcp.io/agent.md");
    // The global fetch fits the injected type as is (checked by tsc).
    const global: FetchLike = globalThis.fetch;
    expect(typeof global).toBe("function");
  });

  it("refuses to send more than 4 KB (one warn line), and a throwing fetch is one warn line too", async () => {
    const logger = createMemoryLogger();
    let called = 0;
    const throwing: FetchLike = async () => {
      called++;
      throw new Error("boom");
    };
    expect(await publishAgentMd({ aid: "a.agentcp.io", text: "x".repeat(4097), token: "t", fetch: throwing, logger })).toEqual({ ok: false, reason: "too-large" });
    expect(called).toBe(0);
    expect(await publishAgentMd({ aid: "a.agentcp.io", text: "x", token: "t", fetch: throwing, logger })).toEqual({ ok: false, reason: "network" });
    expect(logger.entries.map((e) => [e.level, e.event, e.fields.reason])).toEqual([
      ["warn", "profile.publish-failed", "too-large"],
      ["warn", "profile.publish-failed", "network"],
    ]);
  });
});

describe("fetchAgentMd", () => {
  it("a stranger's profile: not found before it publishes, its type after", async () => {
    expect(await fetchAgentMd({ aid: "stranger.agentcp.io", fetch })).toEqual({ ok: false, reason: "not-found", status: 404 });
    const text = "---\naid: stranger.agentcp.io\ntype: agent\n---\n# Stranger\n";
    expect(await publishAgentMd({ aid: "stranger.agentcp.io", text, token: "tok-stranger", fetch })).toEqual({ ok: true, status: 204 });
    const got = await fetchAgentMd({ aid: "stranger.agentcp.io", fetch });
    expect(got).toMatchObject({ ok: true, profile: { aid: "stranger.agentcp.io", type: "agent" } });
  });
});

describe("fetchAgentMd limits", () => {
  it("a response declaring more than 4 KB is refused before its body is read; one sent without a length is checked after", async () => {
    let read = 0;
    const big: FetchLike = async () => ({ ok: true, status: 200, headers: { get: (n) => (n === "content-length" ? "5000" : null) }, text: async () => (read++, "x") });
    expect(await fetchAgentMd({ aid: "a.x.io", fetch: big })).toEqual({ ok: false, reason: "too-large" });
    expect(read).toBe(0);
    const unsized: FetchLike = async () => ({ ok: true, status: 200, text: async () => "y".repeat(4097) });
    expect(await fetchAgentMd({ aid: "a.x.io", fetch: unsized })).toEqual({ ok: false, reason: "too-large" });
  });
});

describe("resolveProfileText", () => {
  it("generated by default, with the package version", () => {
    const r = resolveProfileText(identitySchema.parse({ aid: "alice.agentcp.io" }));
    expect(r.source).toBe("generated");
    expect(parseAgentMd(r.text).version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("describePublishedProfile", () => {
  it("prints the published text with its time and hash, or says why there is none", async () => {
    const args = { stateDir: dir, identityId: "alice", identity: alice };
    expect(describePublishedProfile(args)).toBe("agent.md: not published yet (it is published after the next sign-in)");
    await sync();
    const out = describePublishedProfile(args).split("\n");
    expect(out[0]).toMatch(/^agent\.md published 1970-01-01T00:00:01\.000Z \(sha256 [0-9a-f]{12}\):$/);
    expect(out[1]).toBe("---");
    expect(out).toContain("# Alice");
    expect(describePublishedProfile({ ...args, identity: identitySchema.parse({ aid: "alice.agentcp.io", profile: { publish: false } }) })).toBe(
      "agent.md: not published (profile.publish is false)",
    );
  });
});
