// Free guest identities cannot lock members out (real sockets, real keys): guest certificates are
// limited per source address, guest sockets have their own cap in all and per source, and the
// sockets of registered identities and configured members never count against it.
import WebSocket from "ws";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClient, createIdentity, signIn, type Identity } from "../../../src/network/index.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { tempDir } from "../../network/support.ts";

let tmp: ReturnType<typeof tempDir>;
let net: LocalNetwork | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
  sockets.splice(0).forEach((ws) => ws.terminate());
  await net?.close();
  net = undefined;
  tmp.cleanup();
});

const http = createHttpClient();

async function guest(): Promise<Identity> {
  const reply = await http.request(`${net!.localUrl}/api/accesspoint/sign_guest_cert`);
  if (reply.status !== 200) throw new Error(`guest refused: ${reply.status}`);
  const body = reply.json as { guest_aid: string; key: string; cert: string };
  const privateKey = createPrivateKey(body.key);
  return { aid: body.guest_aid, privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString(), certPem: body.cert, dir: undefined };
}

/** Opens a /session socket for `identity`: its upgrade status (101 when open). */
async function connect(identity: Identity): Promise<number> {
  const token = await signIn({ url: `${net!.localUrl}/api/message/sign_in`, identity, http });
  const ws = new WebSocket(`${net!.localUrl.replace(/^http/, "ws")}/session?agent_id=${identity.aid}&signature=${token}`);
  sockets.push(ws);
  ws.on("error", () => {});
  return new Promise((resolve) => {
    ws.once("open", () => resolve(101));
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
  });
}

const member = (aid: string) => createIdentity({ aid, stateDir: join(tmp.dir, "ids"), accessPointUrl: net!.localUrl, noPassphrase: true });

describe("guests cannot lock members out (real sockets)", () => {
  it("sign_guest_cert gives one source address 20 certificates a minute, then answers 429", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net") });
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push((await http.request(`${net.localUrl}/api/accesspoint/sign_guest_cert`)).status);
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
  });

  it("guest sockets fill only their own room (503 past it); the owner and a registered member still get in", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({
      stateDir: join(tmp.dir, "net"),
      reservedMembers: ["sam.acp.local"],
      socketLimits: { maxConnections: 2, maxGuestConnections: 3, maxGuestConnectionsPerSource: 3 },
    });
    const guests = await Promise.all(Array.from({ length: 5 }, () => guest()));
    const statuses: number[] = [];
    for (const g of guests) statuses.push(await connect(g));
    expect(statuses).toEqual([101, 101, 101, 503, 503]);
    expect(await connect(await member("alice.acp.local"))).toBe(101);
    expect(await connect(await member("bob.acp.local"))).toBe(101);
    // Registered identities fill maxConnections: one more is refused, but never a configured member.
    expect(await connect(await member("carol.acp.local"))).toBe(503);
    const sam = await createIdentity({ aid: "sam.acp.local", stateDir: join(tmp.dir, "ids"), accessPointUrl: net.localUrl, noPassphrase: true, http: { ...http, postJson: async (_url, body) => {
      const { id, csr } = body as { id: string; csr: string };
      const r = await net!.certifyConfigured(id, csr);
      return { status: r.status, headers: {}, text: "", json: r.status === 200 ? { certificate: r.certificate } : { error: r.error } };
    } } });
    expect(await connect(sam)).toBe(101);
  });

  it("one source address holds at most maxGuestConnectionsPerSource guest sockets", async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ stateDir: join(tmp.dir, "net"), socketLimits: { maxGuestConnectionsPerSource: 2 } });
    const guests = await Promise.all(Array.from({ length: 3 }, () => guest()));
    const statuses: number[] = [];
    for (const g of guests) statuses.push(await connect(g));
    expect(statuses).toEqual([101, 101, 503]);
    expect(net.counters().refusedFull).toBe(1);
  });
});
