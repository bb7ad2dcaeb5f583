// The HTTP client sends each request under a turn budget (src/util/turn-budget.ts): the answers
// of many sign-ins arrive in one turn of the event loop, and each one's next request goes out in
// that turn only while it has time left, else in a later turn, in order. Real sockets: a node:http
// server on 127.0.0.1; the budget's clock is the test's own, so "the turn used its budget" is a
// literal step, not a measured one.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpClient } from "../../src/network/http-client.ts";
import { NetworkError } from "../../src/network/errors.ts";
import { createTurnBudget } from "../../src/util/turn-budget.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server that answers every POST with what it got; `got` lists the bodies in the order they came. */
async function echoServer(): Promise<{ url: string; got: string[] }> {
  const got: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      got.push(body);
      res.setHeader("content-type", "application/json");
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  cleanups.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, got };
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

/** A client whose requests go under a 10 ms budget on a clock the test moves (`use(ms)`: that much of this turn's budget gone). */
function clientUnderBudget() {
  let t = 0;
  const turns = createTurnBudget({ budgetMs: 10, now: () => t });
  const http = createHttpClient({}, { turns });
  cleanups.push(() => http.close());
  return { http, turns, use: (ms: number) => turns.run(() => (t += ms)) };
}

describe("requests under a turn budget", () => {
  it("a request asked for once the turn used its budget goes out in a later turn, in the order asked", async () => {
    const { url, got } = await echoServer();
    const { http, turns, use } = clientUnderBudget();
    // This turn: 12 ms of other work under the same budget (another sign-in's request), then two requests.
    use(12);
    const first = http.postJson(url, { n: 1 });
    const second = http.postJson(url, { n: 2 });
    // Neither was sent in this turn (seen failing before requests went through the budget: 0 waiting).
    expect(turns.waiting).toBe(2);
    const replies = await Promise.all([first, second]);
    expect(replies.map((r) => r.json)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(got).toEqual(['{"n":1}', '{"n":2}']);
  });

  it("a turn with time left sends at once", async () => {
    const { url } = await echoServer();
    const { http, turns } = clientUnderBudget();
    await nextTurn();
    const reply = http.postJson(url, { n: 1 });
    expect(turns.waiting).toBe(0);
    expect((await reply).status).toBe(200);
  });

  it("a request cancelled while it waits for its turn is never sent and fails as closed", async () => {
    const { url, got } = await echoServer();
    const { http, turns, use } = clientUnderBudget();
    use(10);
    const cancel = new AbortController();
    const cancelled = http.request(url, { method: "POST", body: "{}", signal: cancel.signal });
    const after = http.postJson(url, { n: 2 });
    expect(turns.waiting).toBe(2);
    cancel.abort();
    await expect(cancelled).rejects.toSatisfy((err) => err instanceof NetworkError && err.code === "CLOSED");
    // The one after it still goes; the server only ever saw that one.
    expect((await after).json).toEqual({ n: 2 });
    expect(got).toEqual(['{"n":2}']);
  });
});
