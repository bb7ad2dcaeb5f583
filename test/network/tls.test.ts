import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { connectAgent, createIdentity, type NetworkAgent, type NetworkError } from "../../src/network/index.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { echoAgent, loopbackLookup, tempDir, waitFor } from "./support.ts";

describe("TLS with the local CA (real sockets, real certificates)", () => {
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

  it("serves https://acp3.<domain>:<port> and writes the CA certificate to its state dir", () => {
    expect(net.accessPointUrl).toBe(`https://acp3.acp.test:${net.port}`);
    expect(net.localUrl).toBe(`https://127.0.0.1:${net.port}`);
    expect(net.caFile).toBe(`${tmp.dir}/net/ca/ca.crt`);
    const ca = new X509Certificate(readFileSync(net.caFile));
    expect(ca.ca).toBe(true);
  });

  it("verified: identity, sign-in and the wss session through acp3.<domain> resolved to 127.0.0.1, trusting the CA file", async () => {
    const tls = { caFile: net.caFile, lookup: loopbackLookup };
    const identity = await createIdentity({ aid: "alice.acp.test", stateDir: `${tmp.dir}/s`, accessPointUrl: net.accessPointUrl, noPassphrase: true, tls });
    const agent = connectAgent({ identity, accessPointUrl: net.accessPointUrl, tls });
    try {
      const ch = agent.channel("group.acp.test");
      await waitFor(() => ch.status === "up", "session up over TLS");
      const got: string[] = [];
      ch.on("message", (m) => got.push(m.payload));
      ch.send("over-tls");
      await waitFor(() => got.length === 1, "echo");
      expect(got).toEqual(["echo:over-tls"]);
    } finally {
      await agent.close();
    }
  });

  it("the same server by address (127.0.0.1 is in the certificate's names)", async () => {
    const identity = await createIdentity({ aid: "bob.acp.test", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true, tls: { ca: net.caPem } });
    const agent = connectAgent({ identity, accessPointUrl: net.localUrl, tls: { ca: net.caPem } });
    try {
      await agent.ready;
      expect(agent.status).toBe("open");
    } finally {
      await agent.close();
    }
  });

  it("an unknown CA is refused: no certificate, no sign-in (named at once as untrusted, never open)", async () => {
    const err = await createIdentity({ aid: "carol.acp.test", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true }).then(() => undefined, (e: unknown) => e);
    expect((err as { code: string }).code).toBe("HTTP_ERROR");
    expect((err as Error).message).toMatch(/self-signed|unable to verify|certificate/i);
    // An identity issued with the CA trusted, then dialled without it.
    const identity = await createIdentity({ aid: "carol.acp.test", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true, tls: { ca: net.caPem } });
    const logger = createMemoryLogger();
    const agent: NetworkAgent = connectAgent({ identity, accessPointUrl: net.localUrl, logger, backoff: { baseMs: 100, maxMs: 100 } });
    try {
      // Never connected: an untrusted certificate is a configuration problem, said in one line, not retried.
      const refused = await agent.ready.then(() => undefined, (e: unknown) => e as NetworkError);
      expect(refused?.code).toBe("UNREACHABLE");
      expect(refused?.message).toMatch(/^certificate not trusted: pass --ca-file or set network\.caFile \(https:\/\/127\.0\.0\.1:\d+: [A-Z_]+\)$/);
      expect(agent.status).toBe("rejected");
      expect(agent.counters()).toMatchObject({ signInFailures: 1, socketsOpened: 0 });
      expect(logger.entries.filter((e) => e.event === "network.retry")).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it("insecureTls: an explicit opt-out that connects without the CA and says so at warn", async () => {
    const identity = await createIdentity({ aid: "dave.acp.test", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true, tls: { insecureTls: true } });
    const logger = createMemoryLogger();
    const agent = connectAgent({ identity, accessPointUrl: net.localUrl, tls: { insecureTls: true }, logger });
    try {
      await agent.ready;
      expect(logger.entries.filter((e) => e.event === "network.tls-insecure").map((e) => e.level)).toEqual(["warn"]);
    } finally {
      await agent.close();
    }
  });

  it("a CA file that cannot be read is one clear INVALID_OPTIONS error naming the aid, before any network call", async () => {
    const identity = await createIdentity({ aid: "erin.acp.test", stateDir: `${tmp.dir}/s`, accessPointUrl: net.localUrl, noPassphrase: true, tls: { ca: net.caPem } });
    expect(() => connectAgent({ identity, accessPointUrl: net.localUrl, tls: { caFile: `${tmp.dir}/missing.crt` } })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTIONS", aid: "erin.acp.test", message: expect.stringContaining("missing.crt") }),
    );
  });
});
