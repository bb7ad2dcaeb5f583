// 5,000 garbage frames from a hostile server wrote 5,001 warn lines. Now: the first 10, then one
// summary line with the count when the minute ends. Real socket on 127.0.0.1, fake clock.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createJsonLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { FAKE_TIMERS_WITH_REAL_IO, startScriptedServer, waitFor } from "../transport/helpers.ts";

let server: Awaited<ReturnType<typeof startScriptedServer>> | undefined;
let conn: GroupConnection | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await conn?.close();
  await server?.close();
  conn = server = undefined;
});

describe("a flood of garbage frames", () => {
  it("5,000 frames: 10 warn lines, then one log.suppressed line with the count; the connection stays up", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    server = await startScriptedServer();
    const lines: Array<Record<string, unknown>> = [];
    const logger = createJsonLogger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
    conn = createGroupConnection({
      url: server.url, aid: "agent.agentcp.io", groups: ["g1"], getCursor: () => 0, onMessages: () => {},
      logger, heartbeatMs: 0, requestTimeoutMs: 10_000, reconnect: { baseMs: 100, maxMs: 1000, jitter: 0 },
    });
    await conn.start();
    for (let i = 0; i < 5000; i++) server.send(`not json {${i}`);
    await waitFor(() => conn!.counters().malformedFrames === 5000, "5,000 frames read", 10_000);
    const dropped = () => lines.filter((l) => l.event === "transport.frame-dropped");
    expect(dropped()).toHaveLength(10);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(lines.filter((l) => l.event === "log.suppressed")).toEqual([
      expect.objectContaining({ level: "warn", of: "transport.frame-dropped", suppressed: 4990 }),
    ]);
    expect(conn.status).toBe("open");
  });
});
