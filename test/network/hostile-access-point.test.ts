// Issue 30.7–30.9 and 27.6: `run` against an access point that sends what it likes. Real sockets:
// a scripted access point (node:http on 127.0.0.1) beside the real local network.
//   - an answer that never ends, or a 100 MB nonce: refused past the body cap, nothing kept, one
//     log line naming the cause, the identity retries with backoff, another identity is unaffected;
//   - a nonce that fits the body but not a nonce's size: refused before it is signed or sent back;
//   - an answer that trickles: cut off at the deadline for the whole exchange, said in one line;
//   - a reset on plain HTTP is a reset (retried), not "use https://";
//   - a certificate for another name (CA trusted) says so, not "pass --ca-file";
//   - `{error: {code, message}}` refusals are read: an identity refusal stops the identity with
//     the reason; a server error is retried naming it;
//   - a message server whose certificate does not verify: one error line with the fix, not retried.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { LookupFunction } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { connectAgent, createIdentity, type Identity, type NetworkAgent, type NetworkError } from "../../src/network/index.ts";
import { createHttpClient } from "../../src/network/http-client.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { echoAgent, tempDir } from "./support.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MiB = 1024 * 1024;

async function localNetwork(tls = false): Promise<{ net: LocalNetwork; dir: string }> {
  const t = tempDir();
  const net = await startLocalNetwork({ domain: "acp.test", stateDir: `${t.dir}/net`, tls, serviceAgents: [echoAgent("group.acp.test")] });
  cleanups.push(() => t.cleanup());
  cleanups.push(() => net.close());
  return { net, dir: t.dir };
}

async function identityOn(net: LocalNetwork, dir: string, aid: string): Promise<Identity> {
  return createIdentity({ aid, stateDir: `${dir}/ids`, accessPointUrl: net.localUrl, noPassphrase: true, ...(net.tls ? { tls: { ca: net.caPem } } : {}) });
}

/** A scripted access point: `handle` answers every request; counts what it sent and the bodies it got. */
async function scriptedAccessPoint(
  handle: (req: IncomingMessage, body: string, res: ServerResponse, ap: { sentBytes: number }) => void,
  onUpgrade?: (socket: Duplex) => void,
): Promise<{ url: string; requests: Array<{ path: string; body: string }>; sent: () => number }> {
  const requests: Array<{ path: string; body: string }> = [];
  const ap = { sentBytes: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ path: req.url ?? "", body });
      handle(req, body, res, ap);
    });
  });
  if (onUpgrade) server.on("upgrade", (_req, socket: Duplex) => onUpgrade(socket));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, sent: () => ap.sentBytes };
}

/** Writes `chunk` as fast as the reader takes it, up to `limit` bytes, then ends (so the old client, which read everything, ends too). */
function stream(res: ServerResponse, ap: { sentBytes: number }, head: string, limit: number): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.write(head);
  ap.sentBytes += head.length;
  const chunk = Buffer.alloc(64 * 1024, "a");
  const pump = () => {
    while (ap.sentBytes < limit) {
      if (res.destroyed) return;
      ap.sentBytes += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    res.end('"}');
  };
  res.on("close", () => res.removeAllListeners("drain"));
  pump();
}

const errorsOf = (logger: ReturnType<typeof createMemoryLogger>) => logger.entries.filter((e) => e.level === "error" || e.level === "warn");

describe("an access point that sends too much", () => {
  it("an answer that never ends: refused past the cap (≤ a few MB read), one warn line naming it, retried with backoff; another identity signs in meanwhile", async () => {
    const ap = await scriptedAccessPoint((_req, _body, res, counters) => stream(res, counters, '{"nonce":"', 64 * MiB));
    const { net, dir } = await localNetwork();
    const victim = await identityOn(net, dir, "victim.acp.test");
    const bystander = await identityOn(net, dir, "bystander.acp.test");
    const logger = createMemoryLogger();
    const hostile = connectAgent({ identity: victim, accessPointUrl: ap.url, logger, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => hostile.close());
    const other: NetworkAgent = connectAgent({ identity: bystander, accessPointUrl: net.localUrl });
    cleanups.push(() => other.close());
    await other.ready;
    await vi.waitFor(() => expect(logger.entries.filter((e) => e.event === "network.retry").length).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 20 });
    const retry = logger.entries.find((e) => e.event === "network.retry")!;
    expect(retry.level).toBe("warn");
    expect(retry.fields).toMatchObject({ aid: "victim.acp.test", reason: "sign-in-failed", code: "RESPONSE_TOO_LARGE" });
    expect(String(retry.fields.error)).toMatch(/answer larger than 1048576 bytes from http:\/\/127\.0\.0\.1:\d+, refused unread$/);
    expect(retry.fields.retryInMs).toBeGreaterThan(0);
    // Each attempt read at most the cap plus what loopback buffers held: never the 64 MB offered.
    expect(ap.sent() / ap.requests.length).toBeLessThan(8 * MiB);
    expect(hostile.status).not.toBe("rejected");
    expect(other.status).toBe("open");
  }, 30_000);

  it("a 100 MB nonce inside valid JSON is refused before it is signed or posted back", async () => {
    const ap = await scriptedAccessPoint((_req, _body, res, counters) => stream(res, counters, '{"nonce":"', 100 * MiB));
    const { net, dir } = await localNetwork();
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity: await identityOn(net, dir, "victim.acp.test"), accessPointUrl: ap.url, logger, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    await vi.waitFor(() => expect(logger.entries.some((e) => e.event === "network.retry")).toBe(true), { timeout: 10_000, interval: 20 });
    // Only first steps reached the server: no signature was ever posted.
    expect(ap.requests.every((r) => !r.body.includes('"signature"'))).toBe(true);
    expect(ap.sent()).toBeLessThan(8 * MiB * ap.requests.length);
  }, 30_000);

  it("a nonce that fits the body cap but not a nonce (600 KB) is refused unsigned, named in the retry line", async () => {
    const nonce = "n".repeat(600 * 1024);
    const ap = await scriptedAccessPoint((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ nonce }));
    });
    const { net, dir } = await localNetwork();
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity: await identityOn(net, dir, "victim.acp.test"), accessPointUrl: ap.url, logger, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    await vi.waitFor(() => expect(logger.entries.some((e) => e.event === "network.retry")).toBe(true), { timeout: 10_000, interval: 20 });
    const retry = logger.entries.find((e) => e.event === "network.retry")!;
    expect(retry.fields).toMatchObject({ code: "BAD_REPLY" });
    expect(String(retry.fields.error)).toMatch(/sent a nonce of 614400 characters for victim\.acp\.test \(at most 4096\): refused unsigned$/);
    expect(ap.requests.every((r) => !r.body.includes('"signature"'))).toBe(true);
  }, 30_000);
});

describe("an access point that answers too slowly", () => {
  it("a byte every 100 ms: cut off at the deadline for the whole exchange (1 s here, 15 s by default), one warn line", async () => {
    const timers: Array<ReturnType<typeof setInterval>> = [];
    cleanups.push(() => timers.forEach(clearInterval));
    const ap = await scriptedAccessPoint((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
      timers.push(setInterval(() => res.write(" "), 100));
    });
    const { net, dir } = await localNetwork();
    const logger = createMemoryLogger();
    const t0 = Date.now();
    const agent = connectAgent({ identity: await identityOn(net, dir, "victim.acp.test"), accessPointUrl: ap.url, logger, http: createHttpClient({}, { timeoutMs: 1000 }), backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    await vi.waitFor(() => expect(logger.entries.some((e) => e.event === "network.retry")).toBe(true), { timeout: 6000, interval: 20 });
    expect(Date.now() - t0).toBeLessThan(4000);
    const retry = logger.entries.find((e) => e.event === "network.retry")!;
    expect(retry.fields).toMatchObject({ code: "HTTP_TIMEOUT" });
    expect(String(retry.fields.error)).toMatch(/no complete answer from http:\/\/127\.0\.0\.1:\d+ within 1 s$/);
    expect(errorsOf(logger).filter((e) => e.event !== "network.retry")).toEqual([]);
  }, 30_000);
});

describe("a message server that opens its socket too slowly", () => {
  it("an upgrade answer trickled a byte every 100 ms: the socket is given up at the dial deadline (1 s here, 15 s by default) and redialled", async () => {
    const timers: Array<ReturnType<typeof setInterval>> = [];
    cleanups.push(() => timers.forEach(clearInterval));
    let base = "";
    const ap = await scriptedAccessPoint(
      (req, body, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        if (req.url?.endsWith("get_accesspoint_config")) return void res.end(JSON.stringify({ config: JSON.stringify({ message_server: `${base}/api/message` }) }));
        const step = JSON.parse(body) as { nonce?: string };
        res.end(JSON.stringify(step.nonce === undefined ? { nonce: "abc123" } : { signature: "token-1" }));
      },
      (socket) => {
        const answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Slow: " + "x".repeat(10_000);
        let i = 0;
        socket.on("error", () => {});
        timers.push(setInterval(() => !socket.destroyed && socket.write(answer[i++ % answer.length]!), 100));
      },
    );
    base = ap.url;
    const { net, dir } = await localNetwork();
    const logger = createMemoryLogger();
    const t0 = Date.now();
    const agent = connectAgent({ identity: await identityOn(net, dir, "victim.acp.test"), accessPointUrl: ap.url, logger, dialTimeoutMs: 1000, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    await vi.waitFor(() => expect(logger.entries.some((e) => e.event === "network.socket-closed")).toBe(true), { timeout: 6000, interval: 20 });
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(logger.entries.find((e) => e.event === "network.socket-closed")!.fields).toMatchObject({ aid: "victim.acp.test", reason: expect.stringMatching(/dial-failed|closed before the connection/) });
    await vi.waitFor(() => expect(agent.counters().signIns).toBeGreaterThanOrEqual(2), { timeout: 6000, interval: 20 });
  }, 30_000);
});

describe("the cause named is the real one", () => {
  it("a plain-HTTP server that resets the first sign-in: a reset, retried — not `use https://`", async () => {
    const ap = await scriptedAccessPoint((req) => req.socket.resetAndDestroy());
    const { net, dir } = await localNetwork();
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity: await identityOn(net, dir, "victim.acp.test"), accessPointUrl: ap.url, logger, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    await vi.waitFor(() => expect(logger.entries.filter((e) => e.event === "network.retry").length).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 20 });
    expect(agent.status).not.toBe("rejected");
    const retry = logger.entries.find((e) => e.event === "network.retry")!;
    expect(String(retry.fields.error)).toMatch(/ECONNRESET|reset/);
    expect(JSON.stringify(logger.entries)).not.toMatch(/https:\/\/ for a server started with --tls/);
  }, 30_000);

  it("plain http:// to a server that speaks TLS still says `use https://` (checked by a TLS handshake, not guessed from the reset)", async () => {
    const { net, dir } = await localNetwork(true);
    const identity = await identityOn(net, dir, "victim.acp.test");
    const agent = connectAgent({ identity, accessPointUrl: net.localUrl.replace("https:", "http:"), backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    const refused = await agent.ready.then(() => undefined, (e: unknown) => e as NetworkError);
    expect(refused?.code).toBe("UNREACHABLE");
    expect(refused?.message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+: it speaks TLS there \(use https:\/\/ for a server started with --tls\)$/);
  }, 30_000);

  it("a certificate for another name, its CA trusted: the name is the problem, not the CA", async () => {
    const { net, dir } = await localNetwork(true);
    const identity = await identityOn(net, dir, "victim.acp.test");
    // acp3.elsewhere.example resolves to the server, whose certificate names acp.test only.
    const lookup: LookupFunction = (_h, o, cb) => ((o as { all?: boolean }).all ? (cb as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: "127.0.0.1", family: 4 }]) : (cb as (e: null, a: string, f: number) => void)(null, "127.0.0.1", 4));
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity, accessPointUrl: `https://acp3.elsewhere.example:${net.port}`, tls: { ca: net.caPem, lookup }, logger });
    cleanups.push(() => agent.close());
    const refused = await agent.ready.then(() => undefined, (e: unknown) => e as NetworkError);
    expect(refused?.code).toBe("UNREACHABLE");
    expect(refused?.message).not.toMatch(/ca-file/);
    expect(refused?.message).toMatch(/^certificate of https:\/\/acp3\.elsewhere\.example:\d+ is not for acp3\.elsewhere\.example \(it names .*acp3\.acp\.test.*\): use a host name it names$/);
  }, 30_000);
});

describe("sign-in refusals as the SDKs shape them (issue 27.6)", () => {
  it("403 {error: {code: CERT_ERROR, message}}: the identity stops at once with the reason, one error line, no retry", async () => {
    const ap = await scriptedAccessPoint((_req, body, res) => {
      const step = JSON.parse(body) as { nonce?: string };
      if (step.nonce === undefined) {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ nonce: "abc123" }));
      }
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "CERT_ERROR", message: "agent certificate revoked" } }));
    });
    const { net, dir } = await localNetwork();
    const logger = createMemoryLogger();
    const t0 = Date.now();
    const agent = connectAgent({ identity: await identityOn(net, dir, "victim.acp.test"), accessPointUrl: ap.url, logger, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    const refused = await agent.ready.then(() => undefined, (e: unknown) => e as NetworkError);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(refused?.code).toBe("IDENTITY_REJECTED");
    expect(refused?.message).toMatch(/refused victim\.acp\.test \(signature\): agent certificate revoked \(CERT_ERROR\)$/);
    expect(agent.status).toBe("rejected");
    expect(errorsOf(logger).map((e) => e.event)).toEqual(["network.identity-rejected"]);
  }, 30_000);

  it("a numeric code (4000, aid not found) refuses the identity too; 503 {error: {code: 500, message}} is retried naming the message", async () => {
    let mode: "gone" | "busy" = "gone";
    const ap = await scriptedAccessPoint((_req, _body, res) => {
      res.writeHead(mode === "gone" ? 404 : 503, { "content-type": "application/json" });
      res.end(JSON.stringify(mode === "gone" ? { error: { code: 4000, message: "no such agent" } } : { error: { code: 500, message: "down for maintenance" } }));
    });
    const { net, dir } = await localNetwork();
    const gone = connectAgent({ identity: await identityOn(net, dir, "victim.acp.test"), accessPointUrl: ap.url });
    cleanups.push(() => gone.close());
    const refused = await gone.ready.then(() => undefined, (e: unknown) => e as NetworkError);
    expect(refused?.code).toBe("IDENTITY_REJECTED");
    expect(refused?.message).toMatch(/no such agent \(4000\)$/);
    mode = "busy";
    const logger = createMemoryLogger();
    const busy = connectAgent({ identity: await identityOn(net, dir, "other.acp.test"), accessPointUrl: ap.url, logger, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => busy.close());
    await vi.waitFor(() => expect(logger.entries.some((e) => e.event === "network.retry")).toBe(true), { timeout: 5000, interval: 20 });
    expect(String(logger.entries.find((e) => e.event === "network.retry")!.fields.error)).toMatch(/failed for other\.acp\.test \(nonce\): down for maintenance \(500\)$/);
    expect(busy.status).not.toBe("rejected");
  }, 30_000);

  it("a message server whose certificate does not verify: one error line with the fix, the identity stops (no silent retries)", async () => {
    // The access point answers sign-in itself and points at a message server (a TLS network with a CA nobody trusts).
    const { net: untrusted, dir } = await localNetwork(true);
    const ap = await scriptedAccessPoint((req, body, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      if (req.url?.endsWith("get_accesspoint_config")) return void res.end(JSON.stringify({ config: JSON.stringify({ message_server: `${untrusted.localUrl}/api/message` }) }));
      const step = JSON.parse(body) as { nonce?: string };
      res.end(JSON.stringify(step.nonce === undefined ? { nonce: "abc123" } : { signature: "token-1" }));
    });
    const identity = await identityOn(untrusted, dir, "victim.acp.test");
    const logger = createMemoryLogger();
    const t0 = Date.now();
    const agent = connectAgent({ identity, accessPointUrl: ap.url, logger, backoff: { baseMs: 50, maxMs: 100 } });
    cleanups.push(() => agent.close());
    const refused = await agent.ready.then(() => undefined, (e: unknown) => e as NetworkError);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(refused?.code).toBe("UNREACHABLE");
    expect(refused?.message).toMatch(
      /^certificate of the message server wss:\/\/127\.0\.0\.1:\d+ not trusted \([A-Z_]+\): set network\.caFile \(--ca-file\) to the CA that issued it, or network\.insecureTls for a network that serves an unverifiable certificate$/,
    );
    expect(errorsOf(logger).map((e) => [e.level, e.event])).toEqual([["error", "network.message-server-untrusted"]]);
    expect(agent.status).toBe("rejected");
    expect(agent.counters()).toMatchObject({ socketsOpened: 0 });
  }, 30_000);
});
