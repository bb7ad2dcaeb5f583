// A wrong host, port, scheme or an untrusted certificate is one line at the first attempt (through
// `acp-group join`, in process), not minutes of retries ending in "no session … within N ms";
// a network that was up and went away is still retried. Real sockets, real identities, the local
// network. "At once" is shown by what happened — one sign-in, no retry scheduled, the reason named
// — never by a stopwatch.
import { createServer } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { startDevNetwork, type DevNetwork } from "../../src/runtime/dev-network.ts";
import { describeUnreachable } from "../../src/network/unreachable.ts";
import { connectAgent, NetworkError, type TlsOptions } from "../../src/network/index.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { tempDir, waitFor } from "./support.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function network(tls: boolean): Promise<{ dev: DevNetwork; stateDir: string }> {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const dev = await startDevNetwork({ stateDir: dir, tls, groups: { lobby: { members: {} } } });
  cleanups.push(() => dev.close());
  await dev.identity("dave.acp.local");
  return { dev, stateDir: join(dir, "local-network") };
}

async function join_(p: { stateDir: string; accessPointUrl: string; caFile?: string }): Promise<{ code: number; err: string[] }> {
  const file = join(p.stateDir, `cfg-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ stateDir: p.stateDir, ...(p.caFile ? { network: { caFile: p.caFile } } : {}), identities: { dave: { aid: "dave.acp.local", accessPointUrl: p.accessPointUrl } } }));
  const err: string[] = [];
  const code = await main(["join", "https://group.acp.local/lobby?code=x", "--identity", "dave", "--config", file, "--timeout-ms", "20000"], { out: () => {}, err: (s) => void err.push(s) });
  return { code, err };
}

/** Dave's agent against `accessPointUrl` (short backoff, so a retry loop would show): how it ended, and how many tries it made. */
async function signInOnce(dev: DevNetwork, accessPointUrl: string, tls?: TlsOptions): Promise<{ err: unknown; signIns: number; retries: number; status: string }> {
  const logger = createMemoryLogger();
  const agent = connectAgent({ identity: await dev.identity("dave.acp.local"), accessPointUrl, logger, backoff: { baseMs: 10, maxMs: 20 }, ...(tls ? { tls } : {}) });
  cleanups.push(() => agent.close());
  const err = await agent.ready.then(() => undefined, (e: unknown) => e);
  // A retry is logged as it is scheduled; "rejected" is final.
  return { err, signIns: agent.counters().signIns, retries: logger.entries.filter((e) => e.event === "network.retry").length, status: agent.status };
}

/** Given up at the first sign-in: UNREACHABLE, one sign-in, no retry scheduled. */
function expectGivenUpAtOnce(r: Awaited<ReturnType<typeof signInOnce>>, message: RegExp | string): void {
  expect(r.err).toBeInstanceOf(NetworkError);
  expect((r.err as NetworkError).code).toBe("UNREACHABLE");
  if (typeof message === "string") expect((r.err as NetworkError).message).toBe(message);
  else expect((r.err as NetworkError).message).toMatch(message);
  expect([r.signIns, r.retries, r.status]).toEqual([1, 0, "rejected"]);
}

describe("connection problems are named in one line within seconds", () => {
  it("a port nobody listens on", async () => {
    const { dev, stateDir } = await network(false);
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const r = await join_({ stateDir, accessPointUrl: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(1);
    expect(r.err).toEqual([`acp-group: cannot reach http://127.0.0.1:${port}: connection refused (nothing listens on that port)`]);
    expectGivenUpAtOnce(await signInOnce(dev, `http://127.0.0.1:${port}`), `cannot reach http://127.0.0.1:${port}: connection refused (nothing listens on that port)`);
  }, 30_000);

  it("https to a server without TLS (the scheme)", async () => {
    const { dev, stateDir } = await network(false);
    const url = dev.net.localUrl.replace("http:", "https:");
    const r = await join_({ stateDir, accessPointUrl: url });
    expect(r.err).toEqual([`acp-group: cannot reach ${url}: it does not speak TLS there (use http:// for a server started without --tls)`]);
    expectGivenUpAtOnce(await signInOnce(dev, url), `cannot reach ${url}: it does not speak TLS there (use http:// for a server started without --tls)`);
  }, 30_000);

  it("a certificate from a CA we were not told to trust", async () => {
    const { dev, stateDir } = await network(true);
    const r = await join_({ stateDir, accessPointUrl: dev.net.localUrl });
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^acp-group: certificate not trusted: pass --ca-file or set network\.caFile \(https:\/\/127\.0\.0\.1:\d+: [A-Z_]+\); a local network's CA is the `ca:` line its server printed$/);
    expectGivenUpAtOnce(await signInOnce(dev, dev.net.localUrl), /^certificate not trusted: pass --ca-file or set network\.caFile/);
  }, 30_000);

  it("a name that does not resolve (describeUnreachable on Node's getaddrinfo error)", () => {
    const err = Object.assign(new Error("https://acp3.acp.local/api/accesspoint/sign_in: getaddrinfo ENOTFOUND acp3.acp.local"), {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND acp3.acp.local"), { code: "ENOTFOUND" }),
    });
    expect(describeUnreachable(err, "https://acp3.acp.local")).toBe("cannot reach https://acp3.acp.local:443: getaddrinfo ENOTFOUND acp3.acp.local");
    expect(describeUnreachable(Object.assign(new Error("HTTP 503"), { code: "SIGN_IN_FAILED" }), "https://acp3.acp.local")).toBeUndefined();
  });

  it("a network that was up and went away is retried, never given up", async () => {
    const { dev } = await network(false);
    const identity = await dev.identity("erin.acp.local");
    const agent = dev.connect(identity, undefined, { backoff: { baseMs: 20, maxMs: 50 } });
    cleanups.push(() => agent.close());
    await agent.ready;
    await dev.close();
    await waitFor(() => agent.counters().signInFailures >= 2 || undefined, "two failed sign-ins after the network went away");
    expect(agent.status).not.toBe("rejected");
  }, 30_000);
});
