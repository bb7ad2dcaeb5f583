// Input from members that parses as JSON but cannot be served back must be refused at the edge:
// the group service is embedded in `start`, so an exception here would take every agent down.
import { afterEach, describe, expect, it } from "vitest";
import { createGroupService, type GroupService, type GroupServiceOptions } from "../../src/server/group-service.ts";
import { createLoopback, type Loopback } from "../support/loopback.ts";
import { rawClient, waitFor } from "../transport/helpers.ts";

const BOB = "bob.acp.local";
const CAROL = "carol.acp.local";
const groups: GroupServiceOptions["groups"] = { g1: { members: { [BOB]: {}, [CAROL]: {} } } };

let server: GroupService | undefined;
let net: Loopback | undefined;
const clients: Array<{ close(): void }> = [];
afterEach(() => {
  clients.splice(0).forEach((c) => c.close());
  server = undefined;
});

async function connect(aid: string) {
  const c = await rawClient(net!, aid, server!.aid);
  clients.push(c);
  await c.request("register_online");
  return c;
}

/** `{"a":{"a":…1…}}`, `depth` levels deep: JSON.parse takes it, JSON.stringify overflows the stack. */
const deepJson = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

describe("createGroupService: metadata it could not serialise", () => {
  // Regression: send_message accepted metadata nested thousands deep; storing it worked, but the
  // fan-out's JSON.stringify threw RangeError out of the frame handler — an uncaught exception
  // in the server's (and, under `start`, every agent's) process.
  it("answers 1009, stores nothing, and keeps serving", async () => {
    server = createGroupService({ domain: "acp.local", groups, rateLimit: null });
    net = createLoopback([server]);
    const bob = await connect(BOB);
    const carol = await connect(CAROL);

    // Written by hand: our own JSON.stringify could not produce this frame either.
    bob.sendRaw(`{"action":"send_message","request_id":"deep-1","group_id":"g1","params":{"content":"hi","metadata":${deepJson(5000)}}}`);
    await waitFor(() => bob.frames.some((f) => f.request_id === "deep-1"), "the answer");
    const refused = bob.frames.find((f) => f.request_id === "deep-1")!;
    expect(refused).toMatchObject({ code: 1009, data: null });
    expect(String(refused.error)).toMatch(/^metadata: /);
    expect(server.history("g1")).toHaveLength(0);

    const ok = await bob.request("send_message", "g1", { content: "hello", metadata: { reply_to: "1", nested: JSON.parse(deepJson(10)) } });
    expect(ok).toMatchObject({ code: 0, data: { msg_id: 1 } });
    const page = await carol.request("pull_messages", "g1", { after_msg_id: 0, limit: 10 });
    expect(page).toMatchObject({ code: 0, data: { messages: [{ msg_id: 1, content: "hello" }] } });
  });
});
