// On the local network every aid's "host" is one local server. This fetch sends a request for
// `https://<aid>/agent.md` to that server over plain HTTP with `Host: <aid>` — which the global
// fetch cannot do, since it always sets Host from the URL.
import { request } from "node:http";
import type { FetchLike } from "../profile/publish.ts";

export function createLoopbackFetch(target: { port: number; host?: string }): FetchLike {
  return (url, init) =>
    new Promise((resolve, reject) => {
      const u = new URL(url);
      const req = request(
        {
          host: target.host ?? "127.0.0.1",
          port: target.port,
          method: init.method,
          path: `${u.pathname}${u.search}`,
          headers: { ...init.headers, Host: u.host, ...(init.body !== undefined ? { "Content-Length": Buffer.byteLength(init.body, "utf8") } : {}) },
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            const body = Buffer.concat(chunks).toString("utf8");
            const headers = { get: (name: string) => ((v) => (v === undefined ? null : String(v)))(res.headers[name.toLowerCase()]) };
            resolve({ ok: status >= 200 && status < 300, status, headers, text: () => Promise.resolve(body) });
          });
        },
      );
      req.on("error", reject);
      req.end(init.body);
    });
}
