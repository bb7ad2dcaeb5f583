// The session life of one peer channel, on a scripted SessionHost (the socket side is tested over
// real sockets elsewhere); fake timers own the retry clock.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionChannel, type SessionHost } from "../../src/network/session-channel.ts";
import { silentLogger } from "../../src/log.ts";

function scriptedHost(inviteStatus: () => number | string) {
  const log: string[] = [];
  let sessions = 0;
  let open = true;
  const host: SessionHost & { setOpen(v: boolean): void } = {
    aid: "alice.acp.local",
    socketOpen: () => open,
    setOpen: (v) => {
      open = v;
    },
    async request(cmd, data) {
      log.push(`T+${Date.now()} ${cmd}`);
      if (cmd === "create_session_req") return { session_id: `s${++sessions}`, identifying_code: "c" };
      return { session_id: data.session_id, status_code: inviteStatus() };
    },
    sendFrame: (cmd, data) => {
      log.push(`T+${Date.now()} ${cmd} ${String(data.message)}`);
      return open;
    },
    nextMessageId: () => String(Date.now()),
    now: () => Date.now(),
    random: () => 0.5,
    logger: silentLogger,
    backoff: {},
    onChannelClosed: () => {},
  };
  return { host, log };
}

describe("a peer channel's sessions (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("T+0 up at once (no wait for invite_agent_ack), the ack refuses → down; again at T+0.75 s (refused) and T+2.25 s (accepted, stays up); socket drop → down; socket back → new session, up", async () => {
    const answers: Array<number | string> = [404, 404, "200", 200];
    const { host, log } = scriptedHost(() => answers.shift() ?? 200);
    const ch = new SessionChannel("group.acp.local", host);
    const events: string[] = [];
    ch.on("up", (u) => events.push(`T+${Date.now()} up ${u.sessionId} reconnect=${u.reconnect}`));
    ch.on("down", (d) => events.push(`T+${Date.now()} down ${d.reason}`));
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(events).toEqual([
      "T+0 up s1 reconnect=false",
      "T+0 down session-refused",
      "T+750 up s2 reconnect=true",
      "T+750 down session-refused",
      "T+2250 up s3 reconnect=true",
    ]);
    expect(ch.send("hello")).toBe(true);
    host.setOpen(false);
    ch.socketDown("socket-closed");
    expect(ch.send("lost")).toBe(false);
    host.setOpen(true);
    ch.socketUp();
    await vi.advanceTimersByTimeAsync(0);
    expect(events.slice(5)).toEqual(["T+10000 down socket-closed", "T+10000 up s4 reconnect=true"]);
    expect(log.filter((l) => l.includes("session_message"))).toEqual(["T+10000 session_message hello"]);
    ch.close();
    expect(ch.status).toBe("closed");
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
