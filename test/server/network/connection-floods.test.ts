// Connection floods from one address do not deny anyone else's sign-in (real TCP sockets on
// loopback: the attacker dials from 127.0.0.2, members from 127.0.0.1). Idle connections are
// capped per source and closed after the idle timeout; nonce requests are rationed per source.
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClient, createIdentity, signIn } from "../../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { tempDir, waitFor } from "../../network/support.ts";

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
const attackers: Socket[] = [];
afterEach(async () => {
  attackers.splice(0).forEach((s) => s.destroy());
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

/** A TCP connection from 127.0.0.2 that sends `text` (or nothing) and reads what comes back. */
function dialFrom2(port: number, text = ""): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect({ host: "127.0.0.1", port, localAddress: "127.0.0.2" });
  attackers.push(socket);
  let got = "";
  socket.on("data", (d) => (got += d.toString()));
  socket.on("error", () => {});
  if (text) socket.write(text);
  return { socket, received: () => got, closed: new Promise((r) => socket.once("close", () => r())) };
}

describe("connection floods (real sockets)", () => {
  it("300 idle TCP connections from one address: past its per-source cap they are refused, the rest closed after the idle timeout; a member signs in meanwhile", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net"), socketLimits: { maxConnections: 4, maxConnectionsPerSource: 20, idleTimeoutMs: 800 } });
    const flood = Array.from({ length: 300 }, () => dialFrom2(net!.port));
    let closed = 0;
    for (const f of flood) void f.closed.then(() => closed++);
    // Those over the cap are dropped at once; 20 stay until they have been idle too long.
    await waitFor(() => closed >= 280, "the connections past the cap refused", 5000);
    const member = await createIdentity({ aid: "alice.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    await expect(signIn({ url: `${net.localUrl}/api/message/sign_in`, identity: member, http: createHttpClient() })).resolves.toMatch(/^[0-9a-f]+$/);
    await waitFor(() => closed === 300, "the idle connections closed", 5000);
  });

  it("a pipelined nonce flood from one address is answered 429 past its per-source rate; a member's sign-in from another address goes through", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net"), socketLimits: { signInsPerSourcePer10s: 50 } });
    const body = (i: number) => JSON.stringify({ agent_id: `x${i}.acp.local`, request_id: `r${i}` });
    const request = (i: number) => `POST /api/message/sign_in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body(i))}\r\n\r\n${body(i)}`;
    // 4 connections × 50 pipelined first steps each.
    const flood = Array.from({ length: 4 }, (_, c) => dialFrom2(net!.port, Array.from({ length: 50 }, (_, i) => request(c * 50 + i)).join("")));
    const member = await createIdentity({ aid: "alice.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    await expect(signIn({ url: `${net.localUrl}/api/message/sign_in`, identity: member, http: createHttpClient() })).resolves.toMatch(/^[0-9a-f]+$/);
    const count = (status: string) => flood.reduce((n, f) => n + (f.received().match(new RegExp(`HTTP/1\\.1 ${status} `, "g"))?.length ?? 0), 0);
    await waitFor(() => count("200") + count("429") === 200, "every flood request answered", 5000);
    expect(count("200")).toBe(50);
    expect(count("429")).toBe(150);
  });
});
