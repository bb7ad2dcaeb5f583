// 5,000 garbage frames from a hostile group service wrote 5,001 warn lines. Now: the first 10,
// then one summary line with the count when the minute ends. The transport over the loopback
// network with a scripted service; fake clock.
import { afterEach, describe, expect, it, vi } from "vitest";
import { createJsonLogger } from "../../src/log.ts";
import { createGroupConnection, type GroupConnection } from "../../src/transport/connection.ts";
import { createLoopback } from "../support/loopback.ts";
import { FAKE_TIMERS_WITH_REAL_IO, scriptedService, waitFor } from "../transport/helpers.ts";

let conn: GroupConnection | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await conn?.close();
  conn = undefined;
});

describe("a flood of garbage frames", () => {
  it("5,000 frames: 10 warn lines, then one log.suppressed line with the count; the connection stays up", async () => {
    vi.useFakeTimers(FAKE_TIMERS_WITH_REAL_IO);
    const service = scriptedService("group.agentcp.io");
    const net = createLoopback([service.agent]);
    const lines: Array<Record<string, unknown>> = [];
    const logger = createJsonLogger({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
    conn = createGroupConnection({
      channel: net.link("agent.agentcp.io").channel("group.agentcp.io"),
      aid: "agent.agentcp.io", groups: ["g1"], getCursor: () => 0, onMessages: () => {},
      logger, heartbeatMs: 0, requestTimeoutMs: 10_000, reconnect: { baseMs: 100, maxMs: 1000, jitter: 0 },
    });
    await conn.start();
    for (let i = 0; i < 5000; i++) service.send(`not json {${i}`);
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
