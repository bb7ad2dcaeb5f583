// A scripted human group member for the real-host test: a real identity signed in to the local
// network (its own key, its own socket and session with the group service), speaking the ACP
// group request/response frames directly (no code shared with our transport, so the test does
// not prove the transport with itself).
import { randomUUID } from "node:crypto";
import type { NetworkAgent } from "../../src/network/index.ts";

export interface HumanMember {
  readonly aid: string;
  /** Sends one message; resolves with the server's msg id and timestamp. */
  say(groupId: string, content: string): Promise<{ msgId: number; timestamp: number }>;
  close(): Promise<void>;
}

export async function connectHuman(params: { agent: NetworkAgent; service: string; timeoutMs?: number }): Promise<HumanMember> {
  const timeoutMs = params.timeoutMs ?? 10_000;
  const aid = params.agent.aid;
  const channel = params.agent.channel(params.service);
  const pending = new Map<string, { resolve: (data: unknown) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  await params.agent.ready;
  await new Promise<void>((resolve, reject) => {
    if (channel.status === "up") return resolve();
    const timer = setTimeout(() => reject(new Error(`${aid}: no session with ${params.service} within ${timeoutMs} ms`)), timeoutMs);
    const off = channel.on("up", () => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });
  channel.on("message", ({ payload }) => {
    let frame: { request_id?: unknown; code?: unknown; data?: unknown; error?: unknown };
    try {
      frame = JSON.parse(payload);
    } catch {
      return;
    }
    if (typeof frame.request_id !== "string") return;
    const waiter = pending.get(frame.request_id);
    if (!waiter) return;
    pending.delete(frame.request_id);
    clearTimeout(waiter.timer);
    if (frame.code === 0) waiter.resolve(frame.data);
    else waiter.reject(new Error(`${aid}: request failed with code ${String(frame.code)} ${String(frame.error ?? "")}`));
  });
  channel.on("down", () => {
    for (const [id, waiter] of pending) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`${aid}: session ended before the answer to ${id}`));
    }
    pending.clear();
  });

  function request(action: string, groupId: string, body: Record<string, unknown>): Promise<unknown> {
    const requestId = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(requestId);
        reject(new Error(`${aid}: no answer to ${action} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(requestId, { resolve, reject, timer });
      if (!channel.send(JSON.stringify({ action, request_id: requestId, group_id: groupId, params: body }))) {
        clearTimeout(timer);
        pending.delete(requestId);
        reject(new Error(`${aid}: no session, ${action} not sent`));
      }
    });
  }

  return {
    aid,
    async say(groupId, content) {
      const data = (await request("send_message", groupId, { content })) as { msg_id?: unknown; timestamp?: unknown } | null;
      return { msgId: Number(data?.msg_id), timestamp: Number(data?.timestamp) };
    },
    close: () => params.agent.close(),
  };
}
