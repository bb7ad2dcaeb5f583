// One legal-looking message must never wedge a group: over real sockets on 127.0.0.1 with real
// keys, the service caps what it stores and pages by bytes, the client reads what the service can
// send, and against a server that sends more (history from before the cap, a server that does not
// split pages) the client shrinks its page and skips a message too large to receive, counted as
// an `oversize` drop with its id — across client and server restarts.
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDevNetwork, type DevNetwork } from "../../../src/runtime/dev-network.ts";
import { connectAgent, ensureIdentity, type NetworkAgent } from "../../../src/network/index.ts";
import { createGroupService, type GroupService } from "../../../src/server/group-service.ts";
import { startLocalNetwork, type LocalNetwork } from "../../../src/server/network/index.ts";
import { createGroupConnection, type GroupConnection } from "../../../src/transport/connection.ts";
import { MAX_INBOUND_PAYLOAD_BYTES, MAX_MESSAGE_BYTES, messageBytes } from "../../../src/wire/limits.ts";
import type { GroupMessage, LogLevel } from "../../../src/types.ts";
import { tempDir, waitFor } from "../../network/support.ts";

const GROUP = "lobby";
const HUMAN = "you.acp.local";
const AGENT = "alice.acp.local";
const members = { [HUMAN]: { human: true }, [AGENT]: {} };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Reader {
  connection: GroupConnection;
  fed: number[];
  logs: Array<{ event: string; fields: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** A member's connection that records every fed msg id and every warn line. */
function reader(agent: NetworkAgent, service: string, aid: string, cursor = 0, requestTimeoutMs = 3000): Reader {
  const fed: number[] = [];
  const logs: Reader["logs"] = [];
  const connection = createGroupConnection({
    channel: agent.channel(service),
    aid,
    groups: [GROUP],
    getCursor: () => cursor,
    onMessages: (_g, messages: GroupMessage[]) => void fed.push(...messages.map((m) => Number(m.msgId))),
    requestTimeoutMs,
    logger: { log: (level: LogLevel, event: string, fields?: Record<string, unknown>) => void (level !== "debug" && logs.push({ event, fields: fields ?? {} })) },
  });
  const close = async () => {
    await connection.close();
    await agent.close();
  };
  cleanups.push(close);
  return { connection, fed, logs, close };
}

async function devLobby(): Promise<{ dev: DevNetwork; join(aid: string, cursor?: number): Promise<Reader> }> {
  const tmp = tempDir();
  const dev = await startDevNetwork({ stateDir: tmp.dir, groups: { [GROUP]: { members } }, rateLimit: null });
  cleanups.push(() => tmp.cleanup(), () => dev.close());
  return {
    dev,
    async join(aid, cursor = 0) {
      const r = reader(dev.connect(await dev.identity(aid)), dev.service.aid, aid, cursor);
      await r.connection.start();
      return r;
    },
  };
}

/** Content and metadata of exactly `bytes` as JSON, all of it escaped: \u0000… in the content, quotes in the metadata. */
function worstCase(bytes: number): { content: string; metadata: Record<string, unknown> } {
  const content = "\u0000".repeat(10_000); // 60,002 bytes as JSON
  const rest = bytes - messageBytes(content, { p: "" });
  const metadata = { p: '"'.repeat(Math.floor(rest / 2)) };
  return { content, metadata };
}

describe("message sizes over real sockets (nothing wedges a group)", () => {
  it("a message over the cap is refused with a code the sender sees; a 1.1 MB line fails before it is sent and the socket stays up", async () => {
    const { join } = await devLobby();
    const human = await join(HUMAN);
    const huge = await human.connection.sendMessage({ groupId: GROUP, content: "x".repeat(1_100_000) }).then(
      () => undefined,
      (e: unknown) => e as { code: string; context: { bytes: number; limit: number } },
    );
    expect(huge?.code).toBe("MESSAGE_TOO_LARGE");
    expect(huge?.context.limit).toBe(MAX_MESSAGE_BYTES);
    // Content within 10,000 characters but metadata past the byte cap: the service answers 1009.
    const refused = await human.connection
      .request("send_message", { groupId: GROUP, params: { content: "hi", metadata: { blob: "y".repeat(70_000) } } })
      .then(() => undefined, (e: unknown) => e as { code: string; context: { resultCode: number }; message: string });
    expect([refused?.code, refused?.context.resultCode]).toEqual(["REQUEST_FAILED", 1009]);
    expect(refused?.message).toContain(`at most ${MAX_MESSAGE_BYTES}`);
    // The socket was never closed: the next post goes through on the same session.
    expect(human.connection.counters().reconnects).toBe(0);
    expect((await human.connection.sendMessage({ groupId: GROUP, content: "still here" })).msgId).toBe("1");
  });

  it("a full page of the largest messages the service stores reaches the client whole", async () => {
    const { dev, join } = await devLobby();
    const big = worstCase(MAX_MESSAGE_BYTES);
    expect(messageBytes(big.content, big.metadata)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(messageBytes(big.content, big.metadata)).toBeGreaterThan(MAX_MESSAGE_BYTES - 4);
    for (let i = 0; i < 50; i++) dev.service.post({ groupId: GROUP, sender: HUMAN, ...big });
    const agent = await join(AGENT);
    // Ready means fed: every message is there the moment start() resolves.
    expect(agent.fed).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const c = agent.connection.counters();
    expect([c.oversizeFrames, c.droppedOversize, c.requestTimeouts]).toEqual([0, 0, 0]);
  });

  it("18 messages of 10,000 control characters (6 bytes each as JSON) go through: pages are split by bytes", async () => {
    const { dev, join } = await devLobby();
    for (let i = 0; i < 18; i++) dev.service.post({ groupId: GROUP, sender: HUMAN, content: "\u0001".repeat(10_000) });
    const agent = await join(AGENT);
    expect(agent.fed).toHaveLength(18);
    expect(agent.connection.counters().oversizeFrames).toBe(0);
  });

  it("against a server that stores more and does not split pages: the page shrinks, the one message too large to receive is dropped as oversize with its id, nothing wedges, across restarts", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const historyFile = join(tmp.dir, "history.jsonl");
    mkdirSync(tmp.dir, { recursive: true });
    // History from a server without the cap: a 2.5 MB line (msg 2) among 40 messages of control characters.
    const lines: string[] = [];
    const wire = (id: number, content: string) => JSON.stringify({ g: GROUP, m: { msg_id: id, sender: HUMAN, content, content_type: "text", timestamp: 1_767_600_000_000 + id, metadata: null } });
    lines.push(wire(1, "before"));
    lines.push(wire(2, "z".repeat(2_500_000)));
    for (let id = 3; id <= 42; id++) lines.push(wire(id, "\u0000".repeat(10_000)));
    lines.push(wire(43, "after"));
    writeFileSync(historyFile, lines.join("\n") + "\n");

    let net: LocalNetwork | undefined;
    let service: GroupService | undefined;
    const up = async () => {
      // No byte budget per page: like a server that answers a 50-message pull with everything.
      service = createGroupService({ domain: "acp.local", groups: { [GROUP]: { members } }, historyFile, rateLimit: null, maxPageBytes: Number.MAX_SAFE_INTEGER });
      net = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "net"), serviceAgents: [service] });
    };
    await up();
    cleanups.push(() => net?.close());
    const identity = await ensureIdentity({ aid: AGENT, stateDir: join(tmp.dir, "ids"), accessPointUrl: net!.localUrl, noPassphrase: true });
    const connect = async (cursor: number) => {
      const r = reader(connectAgent({ identity, accessPointUrl: net!.localUrl }), service!.aid, AGENT, cursor);
      await r.connection.start();
      return r;
    };

    const first = await connect(0);
    // Everything but msg 2, in order, once — the moment ready resolves.
    expect(first.fed).toEqual([1, ...Array.from({ length: 41 }, (_, i) => i + 3)]);
    const c = first.connection.counters();
    expect(c.droppedOversize).toBe(1);
    expect(c.pageShrinks).toBeGreaterThan(0);
    const drop = first.logs.find((l) => l.event === "transport.message-dropped");
    expect(drop?.fields).toMatchObject({ groupId: GROUP, reason: "oversize", msgId: "2" });
    expect(first.logs.some((l) => l.event === "transport.pull-failed")).toBe(false);
    expect(MAX_INBOUND_PAYLOAD_BYTES).toBeLessThan(2_500_000);
    await waitFor(() => service!.history(GROUP).length === 43 && first.connection.lastFed(GROUP) === 43, "fed to 43");
    await first.close();

    // The server restarts on the same history; the client restarts from what it fed.
    await net!.close();
    await up();
    service!.post({ groupId: GROUP, sender: HUMAN, content: "new" });
    const second = await connect(43);
    expect(second.fed).toEqual([44]);
    // The skip was acked: the service's cursor moved past msg 2 too.
    expect(second.connection.counters().droppedOversize).toBe(0);
  }, 30_000);
});
