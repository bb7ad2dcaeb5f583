// Shared by the transport and group-service tests: real-I/O waits that work under fake timers, a
// raw protocol client on a loopback session, and a scripted service agent that can send anything.
import type { ServiceAgent, ServiceAgentHost } from "../../src/server/service-agent.ts";
import type { Loopback } from "../support/loopback.ts";

/**
 * Fake only the clock and timers: sockets and setImmediate stay real, so tests can wait for I/O
 * while owning time.
 */
export const FAKE_TIMERS_WITH_REAL_IO = {
  toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] as ("setTimeout" | "clearTimeout" | "setInterval" | "clearInterval" | "Date")[],
};

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Polls `cond` across real event-loop turns (not timers) until it holds or `timeoutMs` of real time pass. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 4000): Promise<void> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

/**
 * Runs the event loop until the in-memory network is quiet. Its deliveries are microtasks (as are
 * the group service's fan-out and the transport's acks), and a setImmediate turn comes only after
 * every microtask queued meanwhile: after it, everything sent has arrived and been handled. Not a
 * wait for time — a check after it that nothing arrived is a check that nothing was sent.
 */
export async function drain(): Promise<void> {
  await tick();
}

export type Frame = Record<string, unknown>;

/** A bare protocol client on a loopback session: no validation, no reconnect. */
export async function rawClient(loopback: Loopback, aid: string, peer: string) {
  const link = loopback.link(aid);
  const channel = link.channel(peer);
  const frames: Frame[] = [];
  const waiting = new Map<string, (f: Frame) => void>();
  let seq = 0;
  channel.on("message", ({ payload }) => {
    const frame = JSON.parse(payload) as Frame;
    const id = frame.request_id;
    if (typeof id === "string" && waiting.has(id)) {
      waiting.get(id)!(frame);
      waiting.delete(id);
    } else frames.push(frame);
  });
  await waitFor(() => channel.status === "up", "loopback session");
  return {
    channel,
    /** Unsolicited frames (pushes, notifications) in arrival order. */
    frames,
    request(action: string, groupId?: string, params?: unknown): Promise<Frame> {
      const request_id = `${aid}-r${++seq}`;
      const done = new Promise<Frame>((resolve) => waiting.set(request_id, resolve));
      channel.send(JSON.stringify({ action, request_id, ...(groupId !== undefined ? { group_id: groupId } : {}), ...(params !== undefined ? { params } : {}) }));
      return done;
    },
    sendRaw(payload: string): void {
      channel.send(payload);
    },
    close(): void {
      link.close();
    },
  };
}

export type Reply = { code?: number; data?: unknown; error?: string } | "ignore" | string;

/**
 * A group service agent that answers every request with code 0 (an empty pull page for
 * pull_messages) unless `reply` says otherwise: a response, "ignore", or a raw string sent verbatim.
 */
export function scriptedService(aid: string, reply: (req: Frame) => Reply | undefined = () => undefined) {
  let host: ServiceAgentHost | undefined;
  const requests: Frame[] = [];
  const sessions = new Map<string, string>();
  const agent: ServiceAgent = {
    aid,
    attach(h) {
      host = h;
    },
    onMessage({ sessionId, from, payload }) {
      sessions.set(sessionId, from);
      const req = JSON.parse(payload) as Frame;
      requests.push(req);
      const r = reply(req);
      if (r === "ignore") return;
      const out = typeof r === "string" ? r : JSON.stringify({
        action: req.action,
        request_id: req.request_id,
        code: r?.code ?? 0,
        group_id: req.group_id,
        data: r && "data" in r ? r.data : req.action === "pull_messages" ? { messages: [], has_more: false, latest_msg_id: 0 } : req.action === "get_cursor" ? { msg_cursor: { current_msg_id: 0 } } : {},
        error: r?.error ?? "",
      });
      host?.send({ sessionId, to: from, payload: out });
    },
    onSessionEnd({ sessionId }) {
      sessions.delete(sessionId);
    },
  };
  return {
    agent,
    requests,
    /** Sends raw text to every session that has spoken to it. */
    send(payload: string): void {
      for (const [sessionId, to] of sessions) host?.send({ sessionId, to, payload });
    },
  };
}

export function wireMessage(id: number, content = `m${id}`, sender = "bob.agentcp.io", timestamp = 1_767_600_000_000 + id) {
  return { msg_id: id, sender, content, content_type: "text", timestamp, metadata: null };
}
