// A scripted human group member for the real-host test: its own WebSocket to the group server,
// speaking the ACP group request/response frames directly (no code shared with our transport,
// so the test does not prove the transport with itself).
import { randomUUID } from "node:crypto";
import WebSocket from "ws";

export interface HumanMember {
  readonly aid: string;
  /** Sends one message; resolves with the server's msg id and timestamp. */
  say(groupId: string, content: string): Promise<{ msgId: number; timestamp: number }>;
  close(): Promise<void>;
}

export async function connectHuman(params: { url: string; aid: string; token: string; timeoutMs?: number }): Promise<HumanMember> {
  const timeoutMs = params.timeoutMs ?? 10_000;
  const ws = new WebSocket(params.url, { headers: { "x-acp-aid": params.aid, authorization: `Bearer ${params.token}` } });
  const pending = new Map<string, { resolve: (data: unknown) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`${params.aid}: upgrade refused with HTTP ${res.statusCode}`)));
  });
  ws.on("message", (data) => {
    let frame: { request_id?: unknown; code?: unknown; data?: unknown; error?: unknown };
    try {
      frame = JSON.parse(String(data));
    } catch {
      return;
    }
    if (typeof frame.request_id !== "string") return;
    const waiter = pending.get(frame.request_id);
    if (!waiter) return;
    pending.delete(frame.request_id);
    clearTimeout(waiter.timer);
    if (frame.code === 0) waiter.resolve(frame.data);
    else waiter.reject(new Error(`${params.aid}: request failed with code ${String(frame.code)} ${String(frame.error ?? "")}`));
  });
  ws.on("close", () => {
    for (const [id, waiter] of pending) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`${params.aid}: socket closed before the answer to ${id}`));
    }
    pending.clear();
  });

  function request(action: string, groupId: string, body: Record<string, unknown>): Promise<unknown> {
    const requestId = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(requestId);
        reject(new Error(`${params.aid}: no answer to ${action} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(requestId, { resolve, reject, timer });
      ws.send(JSON.stringify({ action, request_id: requestId, group_id: groupId, params: body }));
    });
  }

  return {
    aid: params.aid,
    async say(groupId, content) {
      const data = (await request("send_message", groupId, { content })) as { msg_id?: unknown; timestamp?: unknown } | null;
      return { msgId: Number(data?.msg_id), timestamp: Number(data?.timestamp) };
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once("close", () => resolve());
        ws.close(1000, "done");
      }),
  };
}
