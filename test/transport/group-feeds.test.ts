// Acks are coalesced as the SDK's sync loop acks: what one turn settles is acked once per group,
// after the turn, with the highest id settled by then — never past the settled cursor.
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../src/log.ts";
import type { ConnectionCounters } from "../../src/transport/connection.ts";
import { GroupFeeds } from "../../src/transport/group-feeds.ts";
import type { ResponseFrame } from "../../src/transport/pending-requests.ts";
import type { Plain } from "../../src/wire/plain.ts";

function feeds(settled: Record<string, number>) {
  const acks: string[] = [];
  const groups = new GroupFeeds({
    groups: ["g1", "g2"],
    connection: { getCursor: () => 0, ackCursor: (g) => settled[g] ?? 0, onMessages: () => {} },
    call: (action: string, groupId: string, params: Plain) => {
      if (action === "ack_messages") acks.push(`${groupId}:${String(params.msg_id)}`);
      return Promise.resolve({ kind: "response", action, requestId: "r", code: 0, groupId, data: {}, error: "", event: undefined } as ResponseFrame);
    },
    counters: {} as ConnectionCounters,
    logger: createMemoryLogger(),
    retry: { baseMs: 10, maxMs: 100 },
    random: () => 0.5,
  });
  return { groups, acks };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("GroupFeeds acks", () => {
  it("a turn's deliveries are acked once per group, after the turn, with the highest id", async () => {
    const { groups, acks } = feeds({ g1: 100, g2: 100 });
    for (const id of [1, 2, 3, 4, 5]) groups.ack("g1", id);
    groups.ack("g2", 7);
    expect(acks).toEqual([]);
    await turn();
    expect(acks).toEqual(["g1:5", "g2:7"]);
    // Nothing moved: nothing more is sent.
    groups.ack("g1", 5);
    await turn();
    expect(acks).toEqual(["g1:5", "g2:7"]);
  });

  it("never past the settled cursor, read when the ack goes out", async () => {
    const settled = { g1: 2 };
    const { groups, acks } = feeds(settled);
    groups.ack("g1", 3);
    settled.g1 = 3; // settled later in the same turn: the ack carries it
    groups.ack("g1", 4);
    await turn();
    expect(acks).toEqual(["g1:3"]);
    // #4 still unsettled: a later run acks nothing until it is.
    groups.ack("g1", 4);
    await turn();
    expect(acks).toEqual(["g1:3"]);
    settled.g1 = 4;
    groups.ack("g1", 4);
    await turn();
    expect(acks).toEqual(["g1:3", "g1:4"]);
  });

  it("a feed closed in the same turn (the connection closing) acks nothing more; the other groups still do", async () => {
    const { groups, acks } = feeds({ g1: 100, g2: 100 });
    groups.ack("g1", 4);
    groups.ack("g2", 6);
    groups.map.get("g1")!.close();
    await turn();
    expect(acks).toEqual(["g2:6"]);
  });
});
