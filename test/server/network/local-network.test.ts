import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { generateKeyPairSync } from "node:crypto";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { createHttpClient, createIdentity, NetworkError, signIn } from "../../../src/network/index.ts";
import { buildCsr } from "../../../src/network/x509.ts";
import { echoAgent, tempDir, waitFor } from "../../network/support.ts";

describe("the local network refuses what the real one refuses (real sockets, real crypto)", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  let group: ReturnType<typeof echoAgent>;
  const http = createHttpClient();
  beforeEach(async () => {
    tmp = tempDir();
    group = echoAgent("group.acp.local");
    net = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/net`, serviceAgents: [group] });
  });
  afterEach(async () => {
    await net.close();
    tmp.cleanup();
  });
  const signCert = async (id: string, cn = id) => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    return http.postJson(`${net.localUrl}/api/accesspoint/sign_cert`, { id, csr: await buildCsr(cn, privateKey) });
  };

  it("sign_cert issues only <name>.<domain>, only for a CSR naming that aid, never a hosted agent's aid, never an aid registered to another key", async () => {
    expect((await signCert("alice.acp.local")).status).toBe(200);
    const refused = [
      await signCert("alice.agentcp.io"),
      await signCert("a.b.acp.local"),
      await signCert("bob.acp.local", "mallory.acp.local"),
      await signCert("group.acp.local"),
      await signCert("alice.acp.local"),
    ];
    expect(refused.map((r) => [r.status, (r.json as { error: string }).error])).toEqual([
      [400, "aid must be <name>.acp.local"],
      [400, "aid must be <name>.acp.local"],
      [400, "csr names mallory.acp.local, not bob.acp.local"],
      [403, "group.acp.local is reserved"],
      [409, "alice.acp.local is already registered to another key"],
    ]);
    const garbage = await http.postJson(`${net.localUrl}/api/accesspoint/sign_cert`, { id: "carol.acp.local", csr: "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n" });
    expect(garbage.status).toBe(400);
  });

  it("a certificate from another CA is refused at sign-in with IDENTITY_REJECTED", async () => {
    const other = await startLocalNetwork({ domain: "acp.local", stateDir: `${tmp.dir}/other` });
    try {
      const stranger = await createIdentity({ aid: "eve.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: other.localUrl, noPassphrase: true });
      const err = await signIn({ url: `${net.localUrl}/api/accesspoint/sign_in`, identity: stranger, http }).then(() => undefined, (e: unknown) => e);
      expect((err as NetworkError).code).toBe("IDENTITY_REJECTED");
      expect((err as NetworkError).message).toContain("certificate refused: not-issued-here");
      expect((err as NetworkError).aid).toBe("eve.acp.local");
    } finally {
      await other.close();
    }
  });

  it("a reused nonce is refused", async () => {
    const alice = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true });
    const url = `${net.localUrl}/api/accesspoint/sign_in`;
    const first = await http.postJson(url, { agent_id: alice.aid, request_id: "r1" });
    const nonce = (first.json as { nonce: string }).nonce;
    const { signNonce } = await import("../../../src/network/sign-in.ts");
    const step2 = { agent_id: alice.aid, request_id: "r1", nonce, public_key: alice.publicKeyPem, cert: alice.certPem, signature: signNonce(alice, nonce) };
    expect((await http.postJson(url, step2)).status).toBe(200);
    expect((await http.postJson(url, step2)).status).toBe(401);
  });

  it("public_key must be the certificate's key, in whatever PEM layout; the same certificate signs in again and again", async () => {
    const alice = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true });
    const bob = await createIdentity({ aid: "bob.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true });
    const url = `${net.localUrl}/api/accesspoint/sign_in`;
    const { signNonce } = await import("../../../src/network/sign-in.ts");
    const attempt = async (publicKey: string) => {
      const requestId = `r-${Math.random()}`;
      const nonce = ((await http.postJson(url, { agent_id: alice.aid, request_id: requestId })).json as { nonce: string }).nonce;
      return http.postJson(url, { agent_id: alice.aid, request_id: requestId, nonce, public_key: publicKey, cert: alice.certPem, signature: signNonce(alice, nonce) });
    };
    expect((await attempt(alice.publicKeyPem)).status).toBe(200);
    const wrong = await attempt(bob.publicKeyPem);
    expect([wrong.status, (wrong.json as { error: string }).error]).toEqual([401, "public_key does not match the certificate"]);
    expect((await attempt("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")).status).toBe(401);
    // CRLF line ends and a 76-column layout are the same key.
    const b64 = alice.publicKeyPem.replace(/-----[A-Z ]+-----|\s/g, "");
    expect((await attempt(`-----BEGIN PUBLIC KEY-----\r\n${b64.match(/.{1,76}/g)!.join("\r\n")}\r\n-----END PUBLIC KEY-----\r\n`)).status).toBe(200);
    expect((await attempt(alice.publicKeyPem)).status).toBe(200);
  });

  it("the socket: an unknown or expired token is refused at the upgrade; a frame outside a session is refused", async () => {
    const alice = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true });
    const dial = (token: string) =>
      new Promise<WebSocket | number>((resolve) => {
        const ws = new WebSocket(`${net.localUrl.replace("http", "ws")}/api/message/session?agent_id=${alice.aid}&signature=${token}`);
        // A reset of a socket the server refused or replaced is not what these tests look at.
        ws.on("error", () => {});
        ws.on("unexpected-response", (_q, res) => resolve(res.statusCode ?? 0));
        ws.on("open", () => resolve(ws));
      });
    expect(await dial("nope")).toBe(401);
    const token = await signIn({ url: `${net.localUrl}/api/message/sign_in`, identity: alice, http });
    const ws = (await dial(token)) as WebSocket;
    const frames: Array<{ cmd: string; data: Record<string, unknown> }> = [];
    ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
    // A bare group frame, as the old transport sent it.
    ws.send(JSON.stringify({ action: "send_message", request_id: "r", group_id: "lobby", params: { content: "hi" } }));
    // A session_message on a session we are not in.
    ws.send(JSON.stringify({ cmd: "session_message", data: { session_id: "nope", sender: alice.aid, receiver: "group.acp.local", message: "{}" } }));
    await waitFor(() => frames.length === 2, "two refusals");
    expect(frames.map((f) => [f.cmd, f.data.message])).toEqual([
      ["error", "a frame outside a session (expected cmd)"],
      ["error", "session_message outside a session"],
    ]);
    // Spoofing the sender inside a real session is refused too.
    ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id: "c1" } }));
    await waitFor(() => frames.length === 3, "ack");
    const sessionId = frames[2]!.data.session_id as string;
    ws.send(JSON.stringify({ cmd: "session_message", data: { session_id: sessionId, sender: "bob.acp.local", receiver: alice.aid, message: "{}" } }));
    await waitFor(() => frames.length === 4, "spoof refusal");
    expect(frames[3]!.data.message).toBe("sender is not the signed-in agent");
    expect(net.counters().refusedFrames).toBe(3);
    const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
    net.expireTokens(alice.aid);
    expect(await closed).toBe(4001);
    expect(await dial(token)).toBe(401);
  });

  it("a newer socket for the same aid replaces the older one (4002) and ends the older one's sessions at once", async () => {
    const alice = await createIdentity({ aid: "alice.acp.local", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true });
    const open = async () => {
      const token = await signIn({ url: `${net.localUrl}/api/message/sign_in`, identity: alice, http });
      const ws = new WebSocket(`${net.localUrl.replace("http", "ws")}/api/message/session?agent_id=${alice.aid}&signature=${token}`);
      const frames: Array<{ cmd: string; data: Record<string, unknown> }> = [];
      ws.on("error", () => {}); // the replaced socket may see a reset; its close code is what is checked
      ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
      await new Promise((r) => ws.once("open", r));
      return { ws, frames };
    };
    const first = await open();
    first.ws.send(JSON.stringify({ cmd: "create_session_req", data: { request_id: "c1" } }));
    const ack = await waitFor(() => first.frames.find((f) => f.cmd === "create_session_ack"), "ack");
    first.ws.send(JSON.stringify({ cmd: "invite_agent_req", data: { request_id: "i1", session_id: ack.data.session_id, acceptor_id: "group.acp.local", invite_code: ack.data.identifying_code, inviter_id: alice.aid } }));
    await waitFor(() => first.frames.find((f) => f.cmd === "invite_agent_ack"), "invite ack");
    const closed = new Promise<number>((r) => first.ws.on("close", (code) => r(code)));
    const second = await open();
    expect(await closed).toBe(4002);
    expect(group.ended).toEqual([{ sessionId: ack.data.session_id, from: alice.aid }]);
    expect(net.connectedAids()).toEqual([alice.aid]);
    second.ws.close();
  });
});
