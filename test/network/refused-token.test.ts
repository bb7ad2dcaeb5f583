// A message service that refuses every socket upgrade (401): the agent signs in again for a fresh
// token before each dial, waits out a backoff between tries, and never opens. Real HTTP server and
// sockets; the access point is scripted so each sign-in hands out a distinct token.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { connectAgent, type HttpClient, type HttpReply, type Identity } from "../../src/network/index.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { waitFor } from "./support.ts";

describe("a refused token at the socket (real HTTP upgrade answered 401)", () => {
  let server: Server;
  let port: number;
  const upgrades: string[] = [];
  beforeEach(async () => {
    upgrades.length = 0;
    server = createServer((_req, res) => res.end());
    server.on("upgrade", (req, socket) => {
      // The client drops the refused socket with unread bytes (a reset); Node leaves an upgrade's socket without an error listener.
      socket.on("error", () => {});
      upgrades.push(new URL(req.url ?? "/", "http://x").searchParams.get("signature") ?? "");
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("signs in afresh before every dial and backs off between them; the socket never opens", async () => {
    let tokens = 0;
    const reply = (json: unknown): HttpReply => ({ status: 200, headers: {}, text: JSON.stringify(json), json });
    const http: HttpClient = {
      request: async () => reply({}),
      postJson: async (url, body) => {
        if (url.endsWith("/get_accesspoint_config")) return reply({ config: JSON.stringify({ message_server: `http://127.0.0.1:${port}/api/message` }) });
        return reply((body as { nonce?: string }).nonce ? { signature: `token-${++tokens}` } : { nonce: "n" });
      },
      close() {},
    };
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    const identity: Identity = { aid: "alice.refused.test", privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString(), certPem: "x", dir: undefined };
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity, accessPointUrl: "https://acp3.refused.test", http, logger, backoff: { baseMs: 20, maxMs: 40 } });
    try {
      await waitFor(() => upgrades.length >= 4, "four refused upgrades");
      await agent.close();
      // Each dial carried the message token of its own, fresh sign-in (two sign-ins per attempt: access point + message service).
      expect(new Set(upgrades).size).toBe(upgrades.length);
      expect(upgrades.every((t) => /^token-\d+$/.test(t))).toBe(true);
      expect(agent.counters().socketsOpened).toBe(0);
      const retries = logger.entries.filter((e) => e.event === "network.retry");
      expect(retries.length).toBeGreaterThanOrEqual(3);
      expect(retries.every((e) => (e.fields.retryInMs as number) >= 10)).toBe(true);
      expect(retries.map((e) => e.fields.failures).slice(0, 3)).toEqual([1, 2, 3]);
      expect(logger.entries.some((e) => e.event === "network.socket-refused" && e.fields.status === 401)).toBe(true);
    } finally {
      await agent.close();
    }
  });
});
