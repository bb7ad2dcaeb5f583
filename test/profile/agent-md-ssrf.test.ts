// A group service (or anyone who names senders) must not steer our agent.md requests at addresses
// of its choosing. Real node:http servers on 127.0.0.1 stand for the internal service an attacker
// aims at; each must see no connection at all.
import { createServer, type Server } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { MemberDirectory } from "../../src/members/member-types.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { createAgentMdFetch } from "../../src/profile/agent-md-fetch.ts";
import { ProfileLookup } from "../../src/profile/member-profile-lookup.ts";
import { isFetchableAid, isPublicAddress } from "../../src/profile/profile-host.ts";
import { fetchAgentMd, publishAgentMd } from "../../src/profile/publish.ts";
import { createMemoryAgentMdStore, handleAgentMdRequest } from "../../src/server/agent-md-store.ts";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** A server on 127.0.0.1 that counts every TCP connection (a TLS hello to it counts too). */
async function target(): Promise<{ port: number; connections: () => number; requests: string[] }> {
  let connections = 0;
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.headers.host} ${req.url}`);
    res.end("---\ntype: agent\n---\n");
  });
  server.on("connection", () => connections++);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, requests };
}

describe("agent.md requests go only to well-formed, public aids", () => {
  it("sender-shaped addresses named by a group service make no request (no `via`: straight to the aid)", async () => {
    const t = await target();
    const directory = new MemberDirectory();
    const lookup = new ProfileLookup({ directory, fetch: createAgentMdFetch(), logger: createMemoryLogger(), now: () => 0 });
    const senders = [
      `127.0.0.1:${t.port}/admin?`,
      `127.0.0.1:${t.port}`,
      `localhost:${t.port}/x#`,
      `[::ffff:127.0.0.1]:${t.port}/`,
      `x@127.0.0.1:${t.port}`,
      `2130706433:${t.port}`,
    ];
    await Promise.all(senders.map((s) => lookup.lookup(s)));
    lookup.close();
    expect(t.connections()).toBe(0);
    for (const s of senders) expect(directory.typeOf(s)).toEqual({ type: "unknown", source: "none" });
  });

  it("with `via` (a configured local network) a malformed aid cannot pick the path or port either", async () => {
    const t = await target();
    const fetch = createAgentMdFetch({ via: `http://127.0.0.1:${t.port}` });
    const r = await fetchAgentMd({ aid: "zed.acp.local:1/internal/secret?", fetch });
    expect(r).toMatchObject({ ok: false, reason: "bad-aid" });
    // The client itself refuses such a URL too, whoever calls it.
    await expect(fetch(`https://127.0.0.1:${t.port}/agent.md`, { method: "GET", headers: {} })).rejects.toMatchObject({ code: "PROFILE_HOST_REFUSED" });
    await expect(fetch("https://zed.acp.local:8080/agent.md", { method: "GET", headers: {} })).rejects.toMatchObject({ code: "PROFILE_HOST_REFUSED" });
    expect(t.requests).toEqual([]);
    // A well-formed aid still goes there, the aid as Host.
    expect(await fetchAgentMd({ aid: "zed.acp.local", fetch })).toMatchObject({ ok: true });
    expect(t.requests).toEqual(["GET zed.acp.local /agent.md"]);
  });

  it("an aid the network issues with an underscore in its name still publishes and fetches its agent.md (regression)", async () => {
    // The local network and the config both allow `_` in an aid's first label (my_bot.acp.local):
    // refusing it as "not a host name" silently stopped such an identity from publishing its profile.
    const store = createMemoryAgentMdStore();
    const server = createServer((req, res) => void handleAgentMdRequest(req, res, { verifyToken: (aid, t) => aid === "my_bot.acp.local" && t === "tok", store }));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const fetch = createAgentMdFetch({ via: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    const text = "---\naid: my_bot.acp.local\nname: my bot\ntype: agent\n---\n# A bot\n";
    expect(await publishAgentMd({ aid: "my_bot.acp.local", text, token: "tok", fetch })).toMatchObject({ ok: true });
    expect(await fetchAgentMd({ aid: "my_bot.acp.local", fetch })).toMatchObject({ ok: true, text });
  });

  it("a well-formed aid whose name resolves to a loopback or private address is refused before connecting", async () => {
    const resolvedTo: string[] = [];
    // Stands in for DNS: the attacker's name points at 127.0.0.1 (or a private address).
    const dns = (address: string): LookupFunction => (hostname, options, callback) => {
      resolvedTo.push(`${hostname}→${address}`);
      const family = address.includes(":") ? 6 : 4;
      if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
      else callback(null, address, family);
    };
    for (const address of ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "fd00::5", "::ffff:192.168.0.1"]) {
      const fetch = createAgentMdFetch({ tls: { lookup: dns(address) } });
      const err = await fetch("https://rebind.example.com/agent.md", { method: "GET", headers: {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, address).toMatchObject({ code: "PROFILE_HOST_REFUSED", host: "rebind.example.com", address });
    }
    expect(resolvedTo).toHaveLength(6);
  });

  it("isFetchableAid: host-name syntax only — labels and dots, no port, path, query, userinfo or IP literal", () => {
    for (const ok of ["alice.agentcp.io", "Bob-2.acp.local", "a.b.c.example", "xn--80ak6aa92e.com", "my_bot.acp.local"]) expect(isFetchableAid(ok), ok).toBe(true);
    for (const bad of [
      "127.0.0.1",
      "127.0.0.1:8080/path?",
      "10.0.0.1",
      "localhost",
      "alice",
      "alice.agentcp.io:443",
      "alice.agentcp.io/agent.md",
      "alice.agentcp.io?x",
      "alice.agentcp.io#x",
      "u@alice.agentcp.io",
      "[::1]",
      "alice..io",
      "-alice.io",
      "alice-.io",
      "alice.io.",
      "alice.123",
      "alice.0x7f",
      "alice agent.io",
      "аlice.io",
      "a.b_c.io",
      "_a.io",
      `${"a".repeat(64)}.io`,
      `${"a.".repeat(127)}io`,
      "",
    ])
      expect(isFetchableAid(bad), bad).toBe(false);
  });

  it("isPublicAddress: loopback, private, link-local, CGNAT, unspecified, multicast and mapped forms are not", () => {
    for (const pub of ["93.184.216.34", "8.8.8.8", "2606:4700::1111"]) expect(isPublicAddress(pub), pub).toBe(true);
    for (const priv of ["127.0.0.1", "127.9.9.9", "0.0.0.0", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "224.0.0.1", "255.255.255.255", "::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "not-an-ip"])
      expect(isPublicAddress(priv), priv).toBe(false);
  });

  it("isPublicAddress: IPv6 forms that carry an IPv4 address to a translator or tunnel are not public either", () => {
    // ::a.b.c.d (IPv4-compatible), local-use NAT64 (64:ff9b:1::/48 reaches the site's own IPv4
    // networks through its translator), 6to4 (2002:AABB:CCDD::) and the old site-local range.
    for (const priv of ["::127.0.0.1", "::7f00:1", "::a00:1", "64:ff9b:1::a00:1", "64:ff9b:1:ffff::7f00:1", "2002:7f00:1::1", "2002:a00:1::", "fec0::1"])
      expect(isPublicAddress(priv), priv).toBe(false);
    for (const pub of ["2001:4860:4860::8888", "2a00:1450:4001::200e"]) expect(isPublicAddress(pub), pub).toBe(true);
  });
});
