// The session life of one peer channel, on a scripted SessionHost (the socket side is tested over
// real sockets elsewhere); fake timers own the invite wait and the retry clock.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { redialBackoff, SessionChannel, type SessionHost } from "../../src/network/session-channel.ts";
import { createMemoryLogger } from "../../src/log.ts";

/** invite answers: a status now, "never" (no ack), or { afterMs, status } (an ack that takes its time). */
type InviteAnswer = number | string | "never" | { afterMs: number; status: number | string };

function scriptedHost(inviteAnswer: () => InviteAnswer) {
  const log: string[] = [];
  let sessions = 0;
  let open = true;
  const logger = createMemoryLogger();
  const host: SessionHost & { setOpen(v: boolean): void } = {
    aid: "alice.acp.local",
    socketOpen: () => open,
    setOpen: (v) => {
      open = v;
    },
    async request(cmd, data) {
      log.push(`T+${Date.now()} ${cmd}`);
      if (cmd === "create_session_req") return { session_id: `s${++sessions}`, identifying_code: "c" };
      const answer = inviteAnswer();
      if (answer === "never") return new Promise(() => {});
      if (typeof answer === "object") {
        await new Promise((r) => setTimeout(r, answer.afterMs));
        return { session_id: data.session_id, status_code: answer.status };
      }
      return { session_id: data.session_id, status_code: answer };
    },
    sendFrame: (cmd, data) => {
      log.push(`T+${Date.now()} ${cmd} ${String(data.message)}`);
      return open;
    },
    nextMessageId: () => String(Date.now()),
    now: () => Date.now(),
    random: () => 0.5,
    logger,
    backoff: redialBackoff(undefined),
    inviteAckWaitMs: 5000,
    onChannelClosed: () => {},
  };
  return { host, log, logger };
}

function record(ch: SessionChannel): string[] {
  const events: string[] = [];
  ch.on("up", (u) => events.push(`T+${Date.now()} up ${u.sessionId} reconnect=${u.reconnect}`));
  ch.on("down", (d) => events.push(`T+${Date.now()} down ${d.reason}`));
  return events;
}

describe("a peer channel's sessions (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("T+0 create + invite; not used before invite_agent_ack: the ack at T+0.3 s brings it up then; nothing sent before it goes out", async () => {
    const { host, log } = scriptedHost(() => ({ afterMs: 300, status: 200 }));
    const ch = new SessionChannel("group.acp.local", host);
    const events = record(ch);
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(299);
    expect(ch.status).toBe("connecting");
    expect(ch.send("too early")).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(events).toEqual(["T+300 up s1 reconnect=false"]);
    expect(ch.send("hello")).toBe(true);
    expect(log).toEqual(["T+0 create_session_req", "T+0 invite_agent_req", "T+300 session_message hello"]);
  });

  it("refusing acks end the session: T+0 refused → down; again at T+0.75 s (refused) and T+2.25 s (accepted, stays up); socket drop → down; socket back → new session, up", async () => {
    const answers: Array<number | string> = [404, 404, "200", 200];
    const { host, log } = scriptedHost(() => answers.shift() ?? 200);
    const ch = new SessionChannel("group.acp.local", host);
    const events = record(ch);
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(events).toEqual([
      "T+0 down session-refused",
      "T+750 down session-refused",
      "T+2250 up s3 reconnect=false",
    ]);
    expect(ch.send("hello")).toBe(true);
    host.setOpen(false);
    ch.socketDown("socket-closed");
    expect(ch.send("lost")).toBe(false);
    host.setOpen(true);
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(0);
    expect(events.slice(3)).toEqual(["T+10000 down socket-closed", "T+10000 up s4 reconnect=true"]);
    expect(log.filter((l) => l.includes("session_message"))).toEqual(["T+10000 session_message hello"]);
    ch.close();
    expect(ch.status).toBe("closed");
  });

  it("a network that never acks: the session is used from T+5 s (inviteAckWaitMs) with one warning, not stalled nor retried", async () => {
    const { host, logger } = scriptedHost(() => "never");
    const ch = new SessionChannel("group.acp.local", host);
    const events = record(ch);
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(4_999);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(events).toEqual(["T+5000 up s1 reconnect=false"]);
    expect(logger.entries.filter((e) => e.event === "network.invite-ack-missing").map((e) => e.level)).toEqual(["warn"]);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(events).toEqual(["T+5000 up s1 reconnect=false"]);
  });

  it("an ack that comes after the wait and refuses still ends the session: up at T+5 s, refused at T+8 s → down, built again after the backoff", async () => {
    const answers: InviteAnswer[] = [{ afterMs: 8000, status: 403 }, 200];
    const { host } = scriptedHost(() => answers.shift() ?? 200);
    const ch = new SessionChannel("group.acp.local", host);
    const events = record(ch);
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(events).toEqual(["T+5000 up s1 reconnect=false", "T+8000 down session-refused", "T+8750 up s2 reconnect=true"]);
  });

  it("renew (the group layer found the session silent): down with the reason at once, a new session up on the same socket; a no-op unless up", async () => {
    const { host, log } = scriptedHost(() => 200);
    const ch = new SessionChannel("group.acp.local", host);
    const events = record(ch);
    ch.renew("silent");
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(1000);
    ch.renew("silent");
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toEqual(["T+0 up s1 reconnect=false", "T+1000 down silent", "T+1000 up s2 reconnect=true"]);
    expect(log.filter((l) => l.includes("create_session_req"))).toEqual(["T+0 create_session_req", "T+1000 create_session_req"]);
    host.setOpen(false);
    ch.socketDown("socket-closed");
    ch.renew("silent");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(events.slice(3)).toEqual(["T+1000 down socket-closed"]);
  });

  it("no retry while the socket is down; close clears a pending retry", async () => {
    const { host, log } = scriptedHost(() => 404);
    const ch = new SessionChannel("group.acp.local", host);
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(0);
    ch.close();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(log).toEqual(["T+0 create_session_req", "T+0 invite_agent_req"]);
  });
});
