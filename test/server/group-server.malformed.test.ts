// Input from members that parses as JSON but cannot be served back must be refused at the edge:
// the local server is embedded in `start`, so an exception here would take every agent down.
import { afterEach, describe, expect, it } from "vitest";
import { startGroupServer, type GroupServer, type GroupServerOptions } from "../../src/server/group-server.ts";
import { rawClient, waitFor } from "../transport/helpers.ts";

const BOB = "bob.agentcp.io";
const CAROL = "carol.agentcp.io";
const groups: GroupServerOptions["groups"] = { g1: { members: { [BOB]: {}, [CAROL]: {} } } };

let server: GroupServer | undefined;
const clients: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

async function connect(aid: string) {
  const c = await rawClient(server!.url, { "x-acp-aid": aid });
  clients.push(c);
  return c;
}

/** `{"a":{"a":…1…}}`, `depth` levels deep: JSON.parse takes it, JSON.stringify overflows the stack. */
const deepJson = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

describe("startGroupServer: metadata it could not serialise", () => {
  // Regression: send_message accepted metadata nested thousands deep; storing it worked, but the
  // fan-out's JSON.stringify threw RangeError out of the socket handler — an uncaught exception
  // in the server's (and, under `start`, every agent's) process.
  it("answers 1009, stores nothing, and keeps serving", async () => {
    server = await startGroupServer({ groups, rateLimit: null });
    const bob = await connect(BOB);
    const carol = await connect(CAROL);

    // Written by hand: our own JSON.stringify could not produce this frame either.
    bob.ws.send(`{"action":"send_message","request_id":"deep-1","group_id":"g1","params":{"content":"hi","metadata":${deepJson(5000)}}}`);
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
