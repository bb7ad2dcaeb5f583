// A group connection's parameters with their defaults (src/transport/connection-options.ts).
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/log.ts";
import type { PeerChannel } from "../../src/network/peer-channel.ts";
import { connectionSettings, DEFAULT_HEARTBEAT_MS, DEFAULT_REGISTER_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, type GroupConnectionParams } from "../../src/transport/connection-options.ts";
import { MAX_INBOUND_PAYLOAD_BYTES, MAX_MESSAGE_BYTES } from "../../src/wire/limits.ts";

const base: GroupConnectionParams = { channel: {} as PeerChannel, aid: "alice.agentcp.io", groups: ["g1"], getCursor: () => 0, onMessages: () => {} };

describe("connectionSettings", () => {
  it("fills every tunable a caller left out with its default", () => {
    expect(connectionSettings(base)).toEqual({
      logger: silentLogger,
      random: Math.random,
      requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
      heartbeatMs: DEFAULT_HEARTBEAT_MS,
      registerTimeoutMs: DEFAULT_REGISTER_TIMEOUT_MS,
      registerRetry: { baseMs: 1000, maxMs: 30_000, jitter: 0.3 },
      reconnect: { baseMs: 500, maxMs: 30_000, jitter: 0.3 },
      sendRetry: { maxAttempts: 5, baseMs: 1000, maxMs: 30_000, jitter: 0.3 },
      maxFrameBytes: MAX_INBOUND_PAYLOAD_BYTES,
      maxMessageBytes: MAX_MESSAGE_BYTES,
    });
    expect([DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_HEARTBEAT_MS, DEFAULT_REGISTER_TIMEOUT_MS]).toEqual([30_000, 180_000, 10_000]);
  });

  it("keeps what the caller gave; register_online is never waited on past the request timeout", () => {
    const s = connectionSettings({ ...base, requestTimeoutMs: 4000, heartbeatMs: 0, reconnect: { baseMs: 10, maxMs: 20 } });
    expect(s).toMatchObject({ requestTimeoutMs: 4000, heartbeatMs: 0, registerTimeoutMs: 4000, reconnect: { baseMs: 10, maxMs: 20 } });
    expect(connectionSettings({ ...base, registerTimeoutMs: 1500 }).registerTimeoutMs).toBe(1500);
  });
});
