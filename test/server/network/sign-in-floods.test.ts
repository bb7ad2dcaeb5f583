// Issue 30.10 and 30.2 (server side), real sockets on loopback, every client on 127.0.0.1 as on
// one machine: a flood of first sign-in steps from the member's own address does not keep a
// member who signs with its registered key from signing in (it got 429 for 12.7 s), also when the
// flood names the member's aid and posts bad proofs for it; and `sign_cert` mints new aids at a
// bounded rate per source address (renewals and in-process members are not counted).
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createHttpClient, createIdentity, NetworkError, signIn, type Identity } from "../../../src/network/index.ts";
import { buildCsr, generateIdentityKey } from "../../../src/network/x509.ts";
import { NEW_AIDS_PER_SOURCE, NEW_AIDS_WINDOW_MS } from "../../../src/server/network/access-point-api.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { tempDir } from "../../network/support.ts";

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  sockets.splice(0).forEach((s) => s.destroy());
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

/** `count` HTTP requests pipelined on `connections` connections from 127.0.0.1; resolves with the status of every answer. */
function flood(port: number, connections: number, count: number, body: (i: number) => string): Promise<number[]> {
  const per = Math.ceil(count / connections);
  return Promise.all(
    Array.from({ length: connections }, (_, c) => {
      const mine = Array.from({ length: Math.min(per, count - c * per) }, (_, i) => body(c * per + i));
      const socket = connect({ host: "127.0.0.1", port });
      sockets.push(socket);
      socket.on("error", () => {});
      socket.write(mine.map((b) => `POST /api/message/sign_in HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`).join(""));
      let got = "";
      return new Promise<number[]>((resolve) => {
        const done = () => resolve([...got.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])));
        socket.on("data", (d) => {
          got += d.toString();
          if ((got.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0) >= mine.length) done();
        });
        socket.on("close", done);
      });
    }),
  ).then((all) => all.flat());
}

async function memberSignsIn(member: Identity): Promise<{ token: string; ms: number }> {
  const t0 = Date.now();
  const http = createHttpClient();
  try {
    const token = await signIn({ url: `${net!.localUrl}/api/message/sign_in`, identity: member, http });
    return { token, ms: Date.now() - t0 };
  } finally {
    http.close();
  }
}

describe("a nonce flood from the member's own address (every client on 127.0.0.1)", () => {
  it("1,500 first steps for made-up aids in one burst, then a registered member signs in at once (no 429); the made-up aids are still rationed", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net") });
    const member = await createIdentity({ aid: "alice.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    const statuses = await flood(net.port, 10, 1500, (i) => JSON.stringify({ agent_id: `x${i}.acp.local`, request_id: `r${i}` }));
    expect(statuses).toHaveLength(1500);
    expect(statuses.filter((s) => s === 429).length).toBe(500);
    const { token, ms } = await memberSignsIn(member);
    expect(token).toMatch(/^[0-9a-f]+$/);
    expect(ms).toBeLessThan(2000);
  }, 30_000);

  it("a flood that names the member's own aid (first steps) and posts bad proofs with its certificate: the member still signs in at once", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net") });
    const member = await createIdentity({ aid: "alice.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    const firsts = flood(net.port, 8, 1500, (i) => JSON.stringify({ agent_id: "alice.acp.local", request_id: `r${i}` }));
    const proofs = flood(net.port, 4, 300, (i) => JSON.stringify({ agent_id: "alice.acp.local", request_id: `p${i}`, nonce: `forged${i}`, cert: member.certPem, signature: "00".repeat(64) }));
    const [first, proof] = await Promise.all([firsts, proofs]);
    expect(first.every((s) => s === 200)).toBe(true);
    expect(proof.every((s) => s === 401)).toBe(true);
    const { ms } = await memberSignsIn(member);
    expect(ms).toBeLessThan(2000);
  }, 30_000);

  it("a member signs in while the flood is still under way", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net") });
    const member = await createIdentity({ aid: "alice.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true });
    const running = flood(net.port, 10, 5000, (i) => JSON.stringify({ agent_id: `x${i}.acp.local`, request_id: `r${i}` }));
    await vi.waitFor(() => expect(net!.counters().refusedSignIns).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
    const { ms } = await memberSignsIn(member);
    expect(ms).toBeLessThan(2000);
    await running;
  }, 30_000);
});

/** `sign_cert` for a fresh key, from `localAddress`. */
function signCertFrom(localAddress: string, aid: string): Promise<{ status: number; body: string }> {
  return buildCsr(aid, generateIdentityKey().privateKey).then(
    (csr) =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({ id: aid, csr });
        const req = httpRequest(`${net!.localUrl}/api/accesspoint/sign_cert`, { method: "POST", localAddress, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on("error", reject);
        req.end(body);
      }),
  );
}

describe("sign_cert mints new aids at a bounded rate per source address (30.2)", () => {
  it(`T+0 ${NEW_AIDS_PER_SOURCE} new aids from 127.0.0.1 issued, the next refused 429 · another address and a renewal not counted · T+window+1ms 127.0.0.1 mints again`, async () => {
    tmp = tempDir();
    let now = Date.UTC(2026, 10, 20);
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net"), now: () => now });
    const ids = join(tmp.dir, "ids");
    const first = await createIdentity({ aid: "m0.acp.local", stateDir: ids, accessPointUrl: net.localUrl, noPassphrase: true });
    for (let i = 1; i < NEW_AIDS_PER_SOURCE; i++) expect((await signCertFrom("127.0.0.1", `m${i}.acp.local`)).status).toBe(200);
    const over = await signCertFrom("127.0.0.1", "one-more.acp.local");
    expect(over.status).toBe(429);
    expect(JSON.parse(over.body)).toEqual({ error: `too many new identities from this address (${NEW_AIDS_PER_SOURCE} per ${NEW_AIDS_WINDOW_MS / 60_000} minutes)` });
    // Through the client it is one CERT_REFUSED naming it.
    const refused = await createIdentity({ aid: "two-more.acp.local", stateDir: ids, accessPointUrl: net.localUrl, noPassphrase: true }).catch((e: unknown) => e as NetworkError);
    expect(refused).toBeInstanceOf(NetworkError);
    expect((refused as NetworkError).message).toMatch(/too many new identities from this address/);
    // Renewing an aid already registered to the key is not minting.
    await expect(createIdentity({ aid: "m0.acp.local", stateDir: ids, accessPointUrl: net.localUrl, noPassphrase: true, overwrite: true, privateKey: first.privateKey })).resolves.toMatchObject({ aid: "m0.acp.local" });
    // Another address has its own allowance.
    expect((await signCertFrom("127.0.0.2", "elsewhere.acp.local")).status).toBe(200);
    now += NEW_AIDS_WINDOW_MS + 1;
    expect((await signCertFrom("127.0.0.1", "one-more.acp.local")).status).toBe(200);
    expect(net.counters().refusedCertificates).toBe(2);
  }, 30_000);
});
