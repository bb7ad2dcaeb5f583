// The local network's agent.md host on a real node:http server on 127.0.0.1, driven by real
// requests with an explicit Host header (the aid is the host name on the ACP network).
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileAgentMdStore, createMemoryAgentMdStore, handleAgentMdRequest, memberTypeFromStore, type AgentMdStore } from "../../src/server/agent-md-store.ts";

const TOKENS: Record<string, string> = { "alice.agentcp.io": "tok-alice", "bob.agentcp.io": "tok-bob" };
const PROFILE = "---\naid: alice.agentcp.io\nname: Alice\ntype: agent\n---\n\n# Alice\n";

function serve(store: AgentMdStore): Promise<Server> {
  const server = createServer((req, res) => {
    void handleAgentMdRequest(req, res, { verifyToken: (aid, token) => TOKENS[aid] === token, store })
      .then((handled) => {
        if (!handled) {
          res.writeHead(404);
          res.end("other path");
        }
      })
      .catch(() => {
        res.writeHead(500);
        res.end();
      });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function call(server: Server, p: { method: string; host?: string; path?: string; token?: string; body?: string }): Promise<{ status: number; body: string; type?: string }> {
  const port = (server.address() as AddressInfo).port;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (p.host !== undefined) headers["Host"] = p.host;
    if (p.token) headers["Authorization"] = `Bearer ${p.token}`;
    if (p.body !== undefined) {
      headers["Content-Type"] = "text/markdown";
      headers["Content-Length"] = Buffer.byteLength(p.body);
    }
    const req = request({ host: "127.0.0.1", port, method: p.method, path: p.path ?? "/agent.md", headers, setHost: p.host === undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), ...(res.headers["content-type"] ? { type: res.headers["content-type"] } : {}) }));
    });
    req.on("error", reject);
    req.end(p.body);
  });
}

describe("handleAgentMdRequest on a real http server", () => {
  let server: Server;
  let store: ReturnType<typeof createMemoryAgentMdStore>;
  beforeEach(async () => {
    store = createMemoryAgentMdStore();
    server = await serve(store);
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("POST with the aid's own token stores it (204); GET on that host serves it back as Markdown", async () => {
    expect((await call(server, { method: "GET", host: "alice.agentcp.io" })).status).toBe(404);
    expect(await call(server, { method: "POST", host: "alice.agentcp.io", token: "tok-alice", body: PROFILE })).toMatchObject({ status: 204, body: "" });
    const got = await call(server, { method: "GET", host: "Alice.AgentCP.io:443" });
    expect(got).toEqual({ status: 200, body: PROFILE, type: "text/markdown; charset=utf-8" });
    // Another host has none.
    expect((await call(server, { method: "GET", host: "bob.agentcp.io" })).status).toBe(404);
  });

  it("refuses a missing token (401), another aid's token (403) and stores nothing", async () => {
    expect((await call(server, { method: "POST", host: "alice.agentcp.io", body: PROFILE })).status).toBe(401);
    expect((await call(server, { method: "POST", host: "alice.agentcp.io", token: "tok-bob", body: PROFILE })).status).toBe(403);
    expect((await call(server, { method: "POST", host: "alice.agentcp.io", token: "wrong", body: PROFILE })).status).toBe(403);
    expect(store.size).toBe(0);
  });

  it("4096 bytes are accepted, 4097 are 413 and nothing is stored", async () => {
    const exact = PROFILE + "x".repeat(4096 - Buffer.byteLength(PROFILE));
    expect((await call(server, { method: "POST", host: "bob.agentcp.io", token: "tok-bob", body: exact })).status).toBe(204);
    const over = await call(server, { method: "POST", host: "alice.agentcp.io", token: "tok-alice", body: exact + "y" });
    expect(over).toMatchObject({ status: 413, body: "agent.md is limited to 4096 bytes\n" });
    expect(store.get("alice.agentcp.io")).toBeUndefined();
    expect(store.get("bob.agentcp.io")).toBe(exact);
  });

  it("a chunked upload without Content-Length is cut off past 4 KB with 413", async () => {
    const port = (server.address() as AddressInfo).port;
    const res = await new Promise<{ status: number }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, method: "POST", path: "/agent.md", headers: { Host: "alice.agentcp.io", Authorization: "Bearer tok-alice" } }, (r) => {
        r.resume();
        r.on("end", () => resolve({ status: r.statusCode ?? 0 }));
      });
      req.on("error", reject);
      req.write("x".repeat(3000));
      req.end("y".repeat(3000));
    });
    expect(res.status).toBe(413);
    expect(store.size).toBe(0);
  });

  it("a Host that is not an aid is 400; other methods 405; other paths are left to the next handler", async () => {
    expect((await call(server, { method: "GET", host: "localhost" })).status).toBe(400);
    expect((await call(server, { method: "DELETE", host: "alice.agentcp.io" })).status).toBe(405);
    expect(await call(server, { method: "GET", host: "alice.agentcp.io", path: "/other" })).toMatchObject({ status: 404, body: "other path" });
  });
});

describe("storage failures", () => {
  it("a store that throws answers 500 and the server keeps serving", async () => {
    const broken: AgentMdStore = {
      get: () => {
        throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      },
      put: () => {
        throw Object.assign(new Error("ENOSPC"), { code: "ENOSPC" });
      },
    };
    const server = await serve(broken);
    try {
      expect((await call(server, { method: "POST", host: "alice.agentcp.io", token: "tok-alice", body: PROFILE })).status).toBe(500);
      expect((await call(server, { method: "GET", host: "alice.agentcp.io" })).status).toBe(500);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("createFileAgentMdStore (real files)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "agentmd-store-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps profiles across store instances (a server restart), keyed case-insensitively", async () => {
    const first = createFileAgentMdStore(dir);
    const server = await serve(first);
    expect((await call(server, { method: "POST", host: "alice.agentcp.io", token: "tok-alice", body: PROFILE })).status).toBe(204);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const second = createFileAgentMdStore(dir);
    expect(second.get("ALICE.agentcp.io")).toBe(PROFILE);
    expect(second.get("bob.agentcp.io")).toBeUndefined();
  });

  it("a put of the text already stored writes nothing; a new text replaces the file", async () => {
    const store = createFileAgentMdStore(dir);
    await store.put("alice.agentcp.io", PROFILE);
    const [name] = readdirSync(dir);
    const first = statSync(join(dir, name!)).ino;
    await store.put("Alice.agentcp.io", PROFILE);
    // An agent republishing the same profile at every start-up costs no write (seen failing: a new inode).
    expect(statSync(join(dir, name!)).ino).toBe(first);
    await store.put("alice.agentcp.io", PROFILE.replace("Alice", "Alicia"));
    expect(statSync(join(dir, name!)).ino).not.toBe(first);
    expect(readFileSync(join(dir, name!), "utf8")).toContain("Alicia");
  });

  it("a put is on disk and served when its promise settles, also after a get that found nothing", async () => {
    const store = createFileAgentMdStore(dir);
    expect(store.get("alice.agentcp.io")).toBeUndefined();
    await store.put("alice.agentcp.io", PROFILE);
    expect(store.get("alice.agentcp.io")).toBe(PROFILE);
    expect(memberTypeFromStore(store, "alice.agentcp.io")).toMatchObject({ type: "agent", code: 0 });
    expect(createFileAgentMdStore(dir).get("alice.agentcp.io")).toBe(PROFILE);
  });

  it("serves what it read or wrote from memory: get_members does not read a file per member", async () => {
    const store = createFileAgentMdStore(dir);
    await store.put("alice.agentcp.io", PROFILE);
    const [name] = readdirSync(dir);
    // This process is the directory's only writer; a change behind its back is not read again (seen failing: read again).
    writeFileSync(join(dir, name!), "changed behind the store's back");
    expect(store.get("alice.agentcp.io")).toBe(PROFILE);
    expect(store.get("nobody.agentcp.io")).toBeUndefined();
    writeFileSync(join(dir, "nobody.agentcp.io.agent.md"), PROFILE);
    expect(store.get("nobody.agentcp.io")).toBeUndefined();
  });

  it("a write that fails rejects (the handler answers 500) and nothing unsaved is served", async () => {
    const store = createFileAgentMdStore(join(dir, "file-not-dir"));
    writeFileSync(join(dir, "file-not-dir"), "a file where the folder should be");
    await expect(store.put("alice.agentcp.io", PROFILE)).rejects.toThrow();
    expect(() => store.get("alice.agentcp.io")).toThrow();
  });

  it("writes off the event loop: put hands back a promise at once, the file lands when it settles; puts of one aid land in order, the last text stays", async () => {
    const store = createFileAgentMdStore(dir);
    const first = store.put("alice.agentcp.io", PROFILE);
    // Seen failing before the change: put wrote and fsynced on the caller's stack and returned nothing.
    expect(first).toBeInstanceOf(Promise);
    const second = store.put("alice.agentcp.io", PROFILE.replace("Alice", "Alicia"));
    const third = store.put("Alice.agentcp.io", PROFILE.replace("Alice", "Alix"));
    await Promise.all([first, second, third]);
    expect(readdirSync(dir).filter((f) => !f.includes(".tmp-"))).toHaveLength(1);
    expect(readdirSync(dir)).toHaveLength(1);
    expect(store.get("alice.agentcp.io")).toContain("Alix");
    expect(createFileAgentMdStore(dir).get("alice.agentcp.io")).toContain("Alix");
  });

  it("settled() waits for every put in flight: a closing network leaves no write behind it", async () => {
    const store = createFileAgentMdStore(dir);
    const landed: string[] = [];
    for (const who of ["alice", "bob", "carol"]) void store.put(`${who}.agentcp.io`, PROFILE.replace("Alice", who))!.then(() => landed.push(who));
    await store.settled!();
    expect(landed.sort()).toEqual(["alice", "bob", "carol"]);
    expect(readdirSync(dir)).toHaveLength(3);
  });
});

describe("memberTypeFromStore", () => {
  it("the type a member's stored profile declares, or 1024 (none) / 1025 (invalid or another aid's)", () => {
    const store = createMemoryAgentMdStore();
    store.put("alice.agentcp.io", PROFILE);
    store.put("dave.agentcp.io", "---\naid: dave.agentcp.io\ntype: human\n---\n");
    store.put("bad.agentcp.io", "# no front matter");
    store.put("liar.agentcp.io", "---\naid: alice.agentcp.io\ntype: human\n---\n");
    store.put("evol.agentcp.io", "---\naid: evol.agentcp.io\ntype: openclaw\n---\n");
    expect(memberTypeFromStore(store, "alice.agentcp.io")).toEqual({ type: "agent", code: 0, declared: "agent" });
    expect(memberTypeFromStore(store, "dave.agentcp.io")).toEqual({ type: "human", code: 0, declared: "human" });
    expect(memberTypeFromStore(store, "evol.agentcp.io")).toEqual({ type: "agent", code: 0, declared: "openclaw" });
    expect(memberTypeFromStore(store, "none.agentcp.io")).toEqual({ type: "unknown", code: 1024 });
    expect(memberTypeFromStore(store, "bad.agentcp.io")).toEqual({ type: "unknown", code: 1025 });
    expect(memberTypeFromStore(store, "liar.agentcp.io")).toEqual({ type: "unknown", code: 1025 });
  });
});
