// How stored messages reach the members online: everything stored in one turn goes out together,
// one `message_batch_push` per receiver and group (split like a pull page, so no batch outgrows
// what a client reads), or the deprecated `message_push`, plus an optional `group_notify
// new_message`; and the event log's notices (group-events.ts). A push that finds its session gone
// drops that session from the online registry.
import type { GroupMessage } from "../types.ts";
import { toWireMessage } from "../wire/message.ts";
import { pageWithin } from "./actions.ts";
import type { Membership } from "./membership.ts";
import type { OnlineRegistry } from "./online-registry.ts";
import type { ServiceAgentHost } from "./service-agent.ts";

export interface FanoutCounters {
  pushesSent: number;
  /** Pushes that found the member's session gone. */
  pushesLost: number;
}

export interface FanoutParams {
  membership: Membership;
  online: OnlineRegistry;
  delivery: { push: "batch" | "message" | "none"; notify: boolean; echo: boolean };
  maxPageBytes: number;
  counters: FanoutCounters;
  now: () => number;
  /** The message service hosting the group service; undefined until attached. */
  host: () => ServiceAgentHost | undefined;
}

export class Fanout {
  readonly #p: FanoutParams;
  /** Messages stored in this turn, per group, pushed together in one batch per receiver. */
  #outbox = new Map<string, GroupMessage[]>();
  #flushQueued = false;

  constructor(p: FanoutParams) {
    this.#p = p;
  }

  /** Queues a stored message; the turn's messages go out together at the next microtask. */
  queue(message: GroupMessage): void {
    const list = this.#outbox.get(message.groupId) ?? [];
    list.push(message);
    this.#outbox.set(message.groupId, list);
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(() => this.#flush());
    }
  }

  /** `frames` to every session online of the group's members (a newcomer included) and of `alsoTell`. */
  notify(groupId: string, frames: readonly unknown[], alsoTell: readonly string[] = []): void {
    const to = new Set([...this.#p.membership.members(groupId).keys(), ...alsoTell]);
    for (const aid of to) for (const sessionId of this.#p.online.liveSessions(aid)) for (const frame of frames) this.#sendTo(aid, sessionId, frame);
  }

  #sendTo(to: string, sessionId: string, frame: unknown): void {
    if (this.#p.host()?.send({ sessionId, to, payload: JSON.stringify(frame) })) {
      this.#p.counters.pushesSent++;
      return;
    }
    this.#p.counters.pushesLost++;
    this.#p.online.drop(to, sessionId);
  }

  /** One batch per receiver and group for everything stored in this turn. */
  #flush(): void {
    this.#flushQueued = false;
    const batches = this.#outbox;
    this.#outbox = new Map();
    const { push, notify, echo } = this.#p.delivery;
    for (const [groupId, messages] of batches) {
      for (const member of this.#p.membership.members(groupId).keys()) {
        const sessions = this.#p.online.liveSessions(member);
        if (sessions.length === 0) continue;
        const mine = echo ? messages : messages.filter((m) => m.sender !== member);
        if (mine.length === 0) continue;
        const wire = mine.map(toWireMessage);
        const frames: unknown[] = [];
        // Split like a pull page: no batch outgrows what a client reads.
        for (let i = 0; push === "batch" && i < mine.length; ) {
          const part = pageWithin(mine.slice(i), this.#p.maxPageBytes).map(toWireMessage);
          i += part.length;
          frames.push({
            action: "message_batch_push",
            group_id: groupId,
            code: 0,
            data: { messages: part, start_msg_id: part[0]!.msg_id, latest_msg_id: part[part.length - 1]!.msg_id, count: part.length },
          });
        }
        if (push === "message") for (const w of wire) frames.push({ action: "message_push", group_id: groupId, data: w });
        if (notify) {
          const last = wire[wire.length - 1]!;
          frames.push({
            action: "group_notify",
            group_id: groupId,
            event: "new_message",
            data: { latest_msg_id: last.msg_id, sender: last.sender, preview: last.content.slice(0, 80) },
            timestamp: last.timestamp,
          });
        }
        for (const sessionId of sessions) for (const frame of frames) this.#sendTo(member, sessionId, frame);
      }
    }
  }
}
