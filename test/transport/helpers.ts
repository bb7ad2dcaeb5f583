// Shared by the transport and server tests: real-I/O waits that work under fake timers, a raw
// protocol client, and a scripted server that can send anything.
import { WebSocket, WebSocketServer } from "ws";
import type { AddressInfo } from "node:net";

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

/** Lets real I/O run for `ms` of real time without touching (possibly fake) timers. */
export async function ioSettle(ms = 40): Promise<void> {
  const start = performance.now();
  while (performance.now() - start < ms) await tick();
}

export type Frame = Record<string, unknown>;

/** A bare protocol client: no validation, no reconnect. */
export async function rawClient(url: string, headers: Record<string, string>) {
  const ws = new WebSocket(url, { headers });
  const frames: Frame[] = [];
  const waiting = new Map<string, (f: Frame) => void>();
  let seq = 0;
  ws.on("message", (data) => {
    const frame = JSON.parse(data.toString()) as Frame;
    const id = frame.request_id;
    if (typeof id === "string" && waiting.has(id)) {
      waiting.get(id)!(frame);
      waiting.delete(id);
    } else frames.push(frame);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return {
    ws,
    /** Unsolicited frames (pushes, notifications) in arrival order. */
    frames,
    request(action: string, groupId?: string, params?: unknown): Promise<Frame> {
      const request_id = `r${++seq}`;
      const done = new Promise<Frame>((resolve) => waiting.set(request_id, resolve));
      ws.send(JSON.stringify({ action, request_id, ...(groupId !== undefined ? { group_id: groupId } : {}), ...(params !== undefined ? { params } : {}) }));
      return done;
    },
    close(): Promise<void> {
      return new Promise((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once("close", () => resolve());
        ws.close();
      });
    },
  };
}

/** Resolves with the HTTP status of a refused upgrade. */
export function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("error", () => {});
    ws.on("open", () => {
      ws.terminate();
      reject(new Error("upgrade was accepted"));
    });
  });
}

export type Reply = { code?: number; data?: unknown; error?: string } | "ignore" | string;

/**
 * A group service that answers every request with code 0 (an empty pull page for pull_messages)
 * unless `reply` says otherwise: a response, "ignore", or a raw string sent verbatim.
 */
export async function startScriptedServer(reply: (req: Frame, socket: WebSocket) => Reply | undefined = () => undefined) {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const sockets = new Set<WebSocket>();
  const requests: Frame[] = [];
  wss.on("connection", (ws) => {
    sockets.add(ws);
    ws.on("close", () => sockets.delete(ws));
    ws.on("message", (data) => {
      const req = JSON.parse(data.toString()) as Frame;
      requests.push(req);
      const r = reply(req, ws);
      if (r === "ignore") return;
      if (typeof r === "string") return ws.send(r);
      const defaultData = req.action === "pull_messages" ? { messages: [], has_more: false, latest_msg_id: 0 } : {};
      ws.send(JSON.stringify({
        action: req.action,
        request_id: req.request_id,
        code: r?.code ?? 0,
        group_id: req.group_id,
        data: r && "data" in r ? r.data : defaultData,
        error: r?.error ?? "",
      }));
    });
  });
  const port = (wss.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    port,
    requests,
    sockets,
    /** Sends raw text (or bytes) to every connected client. */
    send(data: string | Buffer): void {
      for (const ws of sockets) ws.send(data);
    },
    close(): Promise<void> {
      for (const ws of sockets) ws.terminate();
      return new Promise((resolve) => wss.close(() => resolve()));
    },
  };
}

export function wireMessage(id: number, content = `m${id}`, sender = "bob.agentcp.io", timestamp = 1_767_600_000_000 + id) {
  return { msg_id: id, sender, content, content_type: "text", timestamp, metadata: null };
}
