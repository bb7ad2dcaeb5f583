// A client that resets its connection after the local network refused its socket upgrade (404
// path, 401 token) must not take the server down: Node hands an upgrade's socket over with no
// error listener, so an unheard ECONNRESET on it would be an uncaught exception. Real sockets.
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { createMemoryLogger } from "../../../src/log.ts";
import { tempDir } from "../../network/support.ts";
import { waitFor } from "../../support/wait-for.ts";

let tmp: ReturnType<typeof tempDir> | undefined;
let net: LocalNetwork | undefined;
afterEach(async () => {
  await net?.close();
  net = undefined;
  tmp?.cleanup();
});

/** Sends an upgrade request, waits for the refusal's first bytes, then resets (RST) the connection while
 * the server's socket is still open for reading. */
function upgradeThenReset(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, "127.0.0.1");
    socket.on("error", reject);
    socket.once("data", (chunk) => {
      socket.resetAndDestroy();
      resolve(chunk.toString("latin1").split("\r\n")[0] ?? "");
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
  });
}

describe("refused upgrades followed by a reset (real sockets)", () => {
  it("answers 404 and 401, survives the resets, logs them at debug, and still serves", async () => {
    tmp = tempDir();
    const logger = createMemoryLogger();
    net = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "net"), logger });
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      const statuses: string[] = [];
      for (let i = 0; i < 5; i++) {
        statuses.push(await upgradeThenReset(net.port, "/nowhere"));
        statuses.push(await upgradeThenReset(net.port, "/session?agent_id=x.acp.local&signature=forged"));
      }
      // Every reset heard by the server: each socket's ECONNRESET went to its listener (logged at
      // debug), none became an uncaught exception.
      const heard = () => logger.entries.filter((e) => e.event === "network.upgrade-socket-error" && String(e.fields.error).includes("ECONNRESET")).length;
      await waitFor(() => heard() === 10, () => `the server to hear 10 resets (heard ${heard()})`);
      expect(statuses.filter((s) => s.includes("404"))).toHaveLength(5);
      expect(statuses.filter((s) => s.includes("401"))).toHaveLength(5);
      expect(uncaught).toEqual([]);
      // Still serving: a plain request is answered.
      const res = await fetch(`${net.localUrl}/`);
      expect(res.status).toBeGreaterThan(0);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });
});
