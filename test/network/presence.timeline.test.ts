// The presence client's timing on fake timers, with a scripted heartbeat server (sign-in and UDP
// socket) — the real UDP exchange is tested over 127.0.0.1 elsewhere. Timelines as the SDKs run
// them: beat at once, then every interval the server names (never under 5 s); 401, or three
// intervals without an answer, sign in again (at most every 5 s, backing off to 30 s on failures).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import { PresenceClient, type PresenceSocket } from "../../src/network/presence.ts";
import { decodePresence, encodeHeartbeatAck, encodeInvite } from "../../src/wire/presence.ts";

/** A scripted heartbeat server: what it received (T+seconds), and a way to answer. */
function scripted(p: { signIn?: () => Promise<void> } = {}) {
  const wire: string[] = [];
  const at = () => `T+${Date.now() / 1000}s`;
  let deliver: ((d: Buffer) => void) | undefined;
  let sockets = 0;
  const invites: string[] = [];
  const client = new PresenceClient({
    aid: "alice.acp.local",
    async signIn() {
      wire.push(`${at()} sign-in`);
      await p.signIn?.();
      return { serverIp: "127.0.0.1", port: 9, cookie: 77n };
    },
    openSocket(onDatagram): PresenceSocket {
      sockets++;
      deliver = onDatagram;
      return {
        send(datagram) {
          const d = decodePresence(datagram)!;
          wire.push(`${at()} ${d.kind}${d.kind === "heartbeat" ? ` seq=${d.header.seq} cookie=${d.cookie}` : ""}`);
        },
        close() {},
      };
    },
    onInvite: (i) => invites.push(`${at()} ${i.inviter} ${i.sessionId}`),
    logger: createMemoryLogger(),
  });
  return { client, wire, invites, ack: (nextBeatMs: number) => deliver!(encodeHeartbeatAck({ seq: 1, nextBeatMs })), push: (d: Buffer) => deliver!(d), sockets: () => sockets };
}

describe("presence timing (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("T+0 sign in and beat; the server's 8 s is taken, its 1 s is not (5 s floor); silent three intervals → T+28 sign in again", async () => {
    const s = scripted();
    s.client.start();
    await vi.advanceTimersByTimeAsync(0);
    s.ack(8000); // T+0: next in 8 s
    await vi.advanceTimersByTimeAsync(8000);
    s.ack(1000); // T+8: asks for 1 s → 5 s
    await vi.advanceTimersByTimeAsync(20_000); // silent from here
    expect(s.client.intervalMs).toBe(5000);
    expect(s.wire).toEqual([
      "T+0s sign-in",
      "T+0s heartbeat seq=1 cookie=77",
      "T+8s heartbeat seq=2 cookie=77",
      "T+13s heartbeat seq=3 cookie=77",
      "T+18s heartbeat seq=4 cookie=77",
      "T+23s heartbeat seq=5 cookie=77",
      // T+28: 20 s since the last answer (> 3 × 5 s): sign in again, on a new socket, and beat.
      "T+28s sign-in",
      "T+28s heartbeat seq=6 cookie=77",
    ]);
    expect(s.sockets()).toBe(2);
    s.client.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(s.wire).toHaveLength(8);
  });

  it("401 from the server: sign in again — not before 5 s after the last sign-in", async () => {
    const s = scripted();
    s.client.start();
    await vi.advanceTimersByTimeAsync(2000);
    s.ack(401); // T+2
    await vi.advanceTimersByTimeAsync(10_000);
    expect(s.wire.slice(0, 3)).toEqual(["T+0s sign-in", "T+0s heartbeat seq=1 cookie=77", "T+5s sign-in"]);
    s.client.stop();
  });

  it("a failing sign-in is retried at T+5, T+15, T+35, T+65, then every 30 s; the beat starts once it works", async () => {
    let fail = true;
    const failing = scripted({ signIn: () => (fail ? Promise.reject(new Error("503")) : Promise.resolve()) });
    failing.client.start();
    await vi.advanceTimersByTimeAsync(95_000);
    expect(failing.wire).toEqual(["T+0s sign-in", "T+5s sign-in", "T+15s sign-in", "T+35s sign-in", "T+65s sign-in", "T+95s sign-in"]);
    fail = false;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(failing.wire.slice(6)).toEqual(["T+125s sign-in", "T+125s heartbeat seq=1 cookie=77"]);
    expect(failing.client.counters()).toMatchObject({ signIns: 7, signInFailures: 6, beatsSent: 1 });
    failing.client.stop();
  });

  it("an invite (259) is answered (516) at once and handed over", async () => {
    const s = scripted();
    s.client.start();
    await vi.advanceTimersByTimeAsync(1000);
    s.push(encodeInvite({ seq: 5, inviter: "bob.acp.local", inviteCode: "c0de", expires: 0n, sessionId: "s42", messageServer: "wss://acp3.acp.local/api/message" }));
    expect(s.wire.at(-1)).toBe("T+1s invite-ack");
    expect(s.invites).toEqual(["T+1s bob.acp.local s42"]);
    s.client.stop();
  });
});
