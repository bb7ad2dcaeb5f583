// The agent.md HTTP client against real node:http servers on 127.0.0.1: with `via` every request
// reaches that server with the aid as Host (the local profile host stores and serves by it), and a
// stranger's server that streams an endless body is cut off past the limit instead of read whole.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentMdFetch } from "../../src/profile/agent-md-fetch.ts";
import { fetchAgentMd, publishAgentMd } from "../../src/profile/publish.ts";
import { createMemoryAgentMdStore, handleAgentMdRequest } from "../../src/server/agent-md-store.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  server = undefined;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("createAgentMdFetch", () => {
  it("with `via`: publish and read https://<aid>/agent.md at that server, the aid as Host", async () => {
    const store = createMemoryAgentMdStore();
    const via = await listen((req, res) => void handleAgentMdRequest(req, res, { verifyToken: (aid, t) => aid === "zed.acp.local" && t === "tok", store }));
    const fetch = createAgentMdFetch({ via });
    const text = "---\naid: zed.acp.local\ntype: agent\n---\n# zed\n";
    expect(await publishAgentMd({ aid: "zed.acp.local", text, token: "tok", fetch })).toEqual({ ok: true, status: 204 });
    expect(store.get("zed.acp.local")).toBe(text);
    expect(await fetchAgentMd({ aid: "zed.acp.local", fetch })).toMatchObject({ ok: true, text, profile: { type: "agent" } });
    expect(await fetchAgentMd({ aid: "nobody.acp.local", fetch })).toEqual({ ok: false, reason: "not-found", status: 404 });
  });

  it("an endless body without a length is cut off past 4 KB and reported too large", async () => {
    let written = 0;
    const via = await listen((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/markdown" });
      const chunk = "x".repeat(1024);
      const pump = () => {
        // Stops on its own after 10 MB so a broken client cannot hang the test.
        while (written < 10 * 1024 * 1024 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    const r = await fetchAgentMd({ aid: "flood.acp.local", fetch: createAgentMdFetch({ via }) });
    expect(r).toEqual({ ok: false, reason: "too-large" });
    expect(written).toBeLessThan(10 * 1024 * 1024);
  });
});
