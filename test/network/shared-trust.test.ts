// Many identities in one process share their TLS trust and their HTTP connections: one secure
// context per trust configuration (the CA file read once, again only when it changes), and
// keep-alive to the access point, so a sign-in reuses the connection the one before it opened.
// Real sockets against the local network with TLS; the resolver counts new TCP connections.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, copyFileSync } from "node:fs";
import type { LookupFunction } from "node:net";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { connectAgent, createHttpClient, createIdentity, type Identity } from "../../src/network/index.ts";
import { secureContextsBuilt, tlsConnectOptions } from "../../src/network/trust.ts";
import { echoAgent, loopbackLookup, tempDir } from "./support.ts";
import { createAgentMdFetch } from "../../src/profile/agent-md-fetch.ts";
import { fetchAgentMd } from "../../src/profile/publish.ts";
import { DEFAULT_SIGN_IN_CONCURRENCY } from "../../src/network/sign-in-pace.ts";

describe("one trust and kept-alive connections for every identity of a process", () => {
  let tmp: ReturnType<typeof tempDir>;
  let net: LocalNetwork;
  beforeAll(async () => {
    tmp = tempDir();
    net = await startLocalNetwork({ domain: "acp.test", stateDir: `${tmp.dir}/net`, tls: true, serviceAgents: [echoAgent("group.acp.test")] });
  });
  afterAll(async () => {
    await net.close();
    tmp.cleanup();
  });

  it("three identities signing in one after another open one HTTP connection between them (plus one socket each), on one secure context", async () => {
    // Every new TCP connection resolves the host name once: the count of lookups is the count of connections.
    let connections = 0;
    const counting: LookupFunction = (host, options, callback) => {
      connections++;
      loopbackLookup(host, options, callback);
    };
    const tls = { caFile: net.caFile, lookup: counting };
    const issuer = createHttpClient(tls);
    const identities: Identity[] = [];
    for (const name of ["ann", "ben", "cat"]) {
      identities.push(await createIdentity({ aid: `${name}.acp.test`, stateDir: `${tmp.dir}/s`, accessPointUrl: net.accessPointUrl, noPassphrase: true, tls, http: issuer }));
    }
    issuer.close();
    const contextsBefore = secureContextsBuilt();
    connections = 0;
    const agents = [];
    try {
      for (const identity of identities) {
        const agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, tls });
        agents.push(agent);
        await agent.ready;
        expect(agent.status).toBe("open");
      }
      // Each sign-in is five requests (two sign-ins of two steps and the config): 15 connections
      // without keep-alive, plus the three message sockets.
      expect(connections).toBeLessThanOrEqual(1 + identities.length);
    } finally {
      await Promise.all(agents.map((a) => a.close()));
    }
    // The CA file was read and the context built before (by createIdentity): none since.
    expect(secureContextsBuilt()).toBe(contextsBefore);
  });

  it("message sockets open over the kept-alive HTTPS connections: three identities signing in one after another cost one full TLS handshake between them", async () => {
    let connections = 0;
    const counting: LookupFunction = (host, options, callback) => {
      connections++;
      loopbackLookup(host, options, callback);
    };
    const tls = { caFile: net.caFile, lookup: counting };
    const identities: Identity[] = [];
    const issuer = createHttpClient(tls);
    for (const name of ["dan", "eve", "fay"]) {
      identities.push(await createIdentity({ aid: `${name}.acp.test`, stateDir: `${tmp.dir}/s`, accessPointUrl: net.accessPointUrl, noPassphrase: true, tls, http: issuer }));
    }
    issuer.close();
    const before = net.counters();
    connections = 0;
    const agents = [];
    try {
      for (const identity of identities) {
        const agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, tls });
        agents.push(agent);
        await agent.ready;
      }
      const after = net.counters();
      // The first connection verified the network's certificate; the others resumed its TLS
      // session (no certificate sent, signed or checked), and each upgrade took a kept-alive one.
      expect(after.tlsFullHandshakes - before.tlsFullHandshakes).toBe(1);
      expect(after.tlsResumedHandshakes - before.tlsResumedHandshakes).toBeLessThanOrEqual(identities.length - 1);
      // One socket per identity in all: its sign-in requests and then its message socket.
      expect(connections).toBeLessThanOrEqual(identities.length);
    } finally {
      await Promise.all(agents.map((a) => a.close()));
    }
  });

  it("agent.md requests through the access point ride the same kept-alive connections: five aids read one after another cost one connection and at most one full TLS handshake", async () => {
    let connections = 0;
    const counting: LookupFunction = (host, options, callback) => {
      connections++;
      loopbackLookup(host, options, callback);
    };
    const fetch = createAgentMdFetch({ tls: { caFile: net.caFile, lookup: counting }, via: net.accessPointUrl });
    const before = net.counters();
    for (const name of ["gus", "hal", "ida", "jon", "kim"]) {
      expect(await fetchAgentMd({ aid: `${name}.acp.test`, fetch })).toMatchObject({ ok: false, reason: "not-found" });
    }
    const after = net.counters();
    expect(after.tlsFullHandshakes - before.tlsFullHandshakes).toBeLessThanOrEqual(1);
    expect(connections).toBe(1);
  });

  it("the connections of a burst as wide as paced sign-ins make (two requests each) are kept for the next burst", async () => {
    let connections = 0;
    const counting: LookupFunction = (host, options, callback) => {
      connections++;
      loopbackLookup(host, options, callback);
    };
    const http = createHttpClient({ caFile: net.caFile, lookup: counting });
    const width = 2 * DEFAULT_SIGN_IN_CONCURRENCY;
    const burst = () => Promise.all(Array.from({ length: width }, () => http.request(`${net.accessPointUrl}/none`)));
    try {
      await burst();
      expect(connections).toBe(width);
      await burst();
      expect(connections).toBe(width);
    } finally {
      http.close();
    }
  });

  it("the same rules give the same secure context; a CA file that changed is read again", () => {
    const file = `${tmp.dir}/ca-copy.crt`;
    copyFileSync(net.caFile, file);
    const first = tlsConnectOptions({ caFile: file });
    expect(first.secureContext).toBeDefined();
    expect(tlsConnectOptions({ caFile: file }).secureContext).toBe(first.secureContext);
    // The PEM given as text is another configuration: its own context.
    expect(tlsConnectOptions({ ca: net.caPem }).secureContext).not.toBe(first.secureContext);
    // Only the system roots: Node's own default context, none built.
    expect(tlsConnectOptions({}).secureContext).toBeUndefined();
    appendFileSync(file, "\n");
    const renewed = tlsConnectOptions({ caFile: file });
    expect(renewed.secureContext).not.toBe(first.secureContext);
    expect(tlsConnectOptions({ caFile: file }).secureContext).toBe(renewed.secureContext);
  });

  it("a missing CA file is one clear error naming it", () => {
    expect(() => tlsConnectOptions({ caFile: `${tmp.dir}/none.crt` })).toThrow(/cannot read the CA file .*none\.crt: ENOENT/);
  });
});
