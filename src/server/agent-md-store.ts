// The local network's profile host: `POST /agent.md` stores the profile of the aid named by the
// Host header (the aid is the host name on the ACP network), `GET /agent.md` serves it.
// Framework-free: plain node:http request/response, token check and storage injected.
import { RESULT_CODES } from "../wire/result-codes.ts";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { AGENT_MD_MAX_BYTES, checkAgentMd } from "../profile/agent-md.ts";
import { writeFileAtomic } from "../state/atomic-file.ts";
import { encodeSafeName } from "../state/safe-name.ts";
import { BoundedMap } from "../util/bounded-map.ts";

export interface AgentMdStore {
  get(aid: string): string | undefined;
  /** Stores the profile; a file store has it on disk when the promise it returns settles. */
  put(aid: string, text: string): void | Promise<void>;
  /** Resolves once every put begun before the call has ended (written or failed): a closing server waits for it. */
  settled?(): Promise<void>;
}

/** Profiles a file store keeps in memory (4 KB at most each): a network's members, and then some. */
const CACHED_PROFILES = 20_000;

/** Profiles in memory, keyed by lower-cased aid (host names are case-insensitive). */
export function createMemoryAgentMdStore(): AgentMdStore & { readonly size: number } {
  const map = new Map<string, string>();
  return {
    get: (aid) => map.get(aid.toLowerCase()),
    put: (aid, text) => void map.set(aid.toLowerCase(), text),
    get size() {
      return map.size;
    },
  };
}

/**
 * Profiles as `<dir>/<aid>.agent.md` files, written atomically; they survive a restart. This
 * process is the directory's only writer, so what it read or wrote is kept in memory (bounded):
 * `get_members` asks for every member's type and must not read a file each time, and a put of
 * the text already stored writes nothing. A put is on disk when its promise settles (the handler
 * answers 204 only then: the publisher records it as published and does not send it again). The
 * write and its fsyncs go through libuv's thread pool, not the event loop: a thousand agents
 * publishing at start-up spent 5 ms of blocked loop each on them (1.6 of 11.8 s busy in the
 * server's profile at 300 agents), the sign-ins of all the others waiting meanwhile. Puts of one
 * aid are written one after another (the last one's text is what stays), and the network's close
 * waits for those in flight (`settled`), so no write outlives a stop.
 */
export function createFileAgentMdStore(dir: string): AgentMdStore {
  const file = (key: string) => join(dir, `${encodeSafeName(key)}.agent.md`);
  /** Lower-cased aid → its stored text, or null when it has none. */
  const known = new BoundedMap<string, string | null>(CACHED_PROFILES);
  const read = (key: string): string | undefined => {
    const hit = known.get(key);
    if (hit !== undefined) return hit ?? undefined;
    let text: string | null;
    try {
      text = readFileSync(file(key), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      text = null;
    }
    known.set(key, text);
    return text ?? undefined;
  };
  /** Lower-cased aid → the end of its latest write (written one after another: the last text stays). */
  const writing = new Map<string, Promise<void>>();
  const write = async (key: string, text: string): Promise<void> => {
    // Served from the moment the write starts, as a put on the event loop was: the group service
    // must not call a member unknown while its profile is being written.
    known.set(key, text);
    try {
      await writeFileAtomic(file(key), text);
    } catch (err) {
      // What is on disk is unknown now: read it again next time.
      known.delete(key);
      throw err;
    }
  };
  return {
    get: (aid) => read(aid.toLowerCase()),
    put(aid, text) {
      const key = aid.toLowerCase();
      const before = writing.get(key);
      if (before === undefined && known.get(key) === text) return Promise.resolve();
      const done = before === undefined ? write(key, text) : before.then(() => (known.get(key) === text ? undefined : write(key, text)));
      const tail = done.then(
        () => {},
        () => {},
      );
      writing.set(key, tail);
      void tail.then(() => {
        if (writing.get(key) === tail) writing.delete(key);
      });
      return done;
    },
    async settled() {
      await Promise.all(writing.values());
    },
  };
}

export interface AgentMdHandlerOptions {
  /** True when `token` is a current message-service token of `aid`. */
  verifyToken(aid: string, token: string): boolean;
  store: AgentMdStore;
}

/** The aid a request is for: its Host header without a port, lower-cased. */
function aidOfHost(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const name = host.trim().toLowerCase().replace(/:\d+$/, "");
  return /^[a-z0-9][a-z0-9_-]*(\.[a-z0-9-]+)+$/.test(name) ? name : undefined;
}

function reply(res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8"): void {
  res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body, "utf8") });
  res.end(body);
}

/** Reads at most `max` bytes; past that, stops reading and resolves `undefined`. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        done = true;
        // Answer now; the rest of an oversized upload is not worth reading.
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on("error", (err) => {
      if (!done) reject(err);
    });
  });
}

/**
 * Handles `/agent.md`; returns false (nothing written) for any other path, so it can sit in
 * front of other handlers. POST: 400 without a usable Host, 401 without a bearer token, 403 when
 * the token is not that aid's, 413 over 4 KB, 204 stored. GET: 200 with the profile, 404 none.
 */
export async function handleAgentMdRequest(req: IncomingMessage, res: ServerResponse, opts: AgentMdHandlerOptions): Promise<boolean> {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== "/agent.md") return false;
  const aid = aidOfHost(req.headers.host);
  if (!aid) {
    reply(res, 400, "expected the agent id as the Host header\n");
    return true;
  }
  if (req.method === "GET" || req.method === "HEAD") {
    let text: string | undefined;
    try {
      text = opts.store.get(aid);
    } catch {
      reply(res, 500, "could not read agent.md\n");
      return true;
    }
    if (text === undefined) reply(res, 404, "no agent.md\n");
    else reply(res, 200, req.method === "HEAD" ? "" : text, "text/markdown; charset=utf-8");
    return true;
  }
  if (req.method !== "POST") {
    res.setHeader("Allow", "GET, HEAD, POST");
    reply(res, 405, "method not allowed\n");
    return true;
  }
  const auth = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (!auth) {
    reply(res, 401, "expected Authorization: Bearer <token>\n");
    return true;
  }
  if (!opts.verifyToken(aid, auth[1]!)) {
    reply(res, 403, "token does not belong to this agent id\n");
    return true;
  }
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > AGENT_MD_MAX_BYTES) {
    reply(res, 413, `agent.md is limited to ${AGENT_MD_MAX_BYTES} bytes\n`);
    return true;
  }
  const body = await readBody(req, AGENT_MD_MAX_BYTES);
  if (body === undefined) {
    reply(res, 413, `agent.md is limited to ${AGENT_MD_MAX_BYTES} bytes\n`);
    return true;
  }
  try {
    await opts.store.put(aid, body.toString("utf8"));
  } catch {
    // A storage failure (disk full, permissions) is the server's problem, not the caller's input.
    reply(res, 500, "could not store agent.md\n");
    return true;
  }
  res.writeHead(204);
  res.end();
  return true;
}


/**
 * What the local group service reads from a member's stored agent.md: its type, or why there is
 * none (1024 not found, 1025 invalid — no front matter or no `type`), and the type as written. For
 * `get_members` entries (`type`) and `refresh_member_types`.
 */
export function memberTypeFromStore(store: AgentMdStore, aid: string): { type: "human" | "agent" | "unknown"; code: 0 | 1024 | 1025; declared?: string } {
  const text = store.get(aid);
  if (text === undefined) return { type: "unknown", code: RESULT_CODES.AGENT_MD_NOT_FOUND };
  const check = checkAgentMd(text, { aid });
  if (!check.ok) return { type: "unknown", code: RESULT_CODES.AGENT_MD_INVALID };
  return { type: check.parsed.type, code: RESULT_CODES.OK, ...(check.parsed.declaredType !== undefined ? { declared: check.parsed.declaredType } : {}) };
}
