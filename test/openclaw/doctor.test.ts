// The doctor's network checks against a real local ACP network on 127.0.0.1 (src/server/): an
// access point that cannot be reached (closed port, untrusted certificate, wrong scheme) and this
// machine's clock off from the server's. The local clock is injected (`now`), as the doctor takes it.
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLOCK_SKEW_LIMIT_MS, collectAcpGroupNetworkWarnings, formatSkew } from "../../src/openclaw/doctor.ts";
import { estimateClockSkew, probeAccessPoint } from "../../src/network/access-point-probe.ts";
import { startLocalNetwork, type LocalNetwork } from "../../src/server/network/index.ts";
import { tempDir } from "../network/support.ts";

const MIN = 60_000;
let tmp: ReturnType<typeof tempDir>;
let plain: LocalNetwork;
let secure: LocalNetwork;

const cfgWith = (section: Record<string, unknown>) => ({ channels: { "acp-group": section } });
const bot = (accessPointUrl: string) => ({ bot: { aid: "bot.acp.local", accessPointUrl } });

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  tmp = tempDir("acp-doctor-");
  plain = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "plain") });
  secure = await startLocalNetwork({ domain: "acp.local", stateDir: join(tmp.dir, "secure"), tls: true });
});
afterAll(async () => {
  await plain?.close();
  await secure?.close();
  tmp?.cleanup();
});

describe("estimateClockSkew (pure)", () => {
  it("local clock 10 min ahead, 200 ms round trip: skew ≈ +10 min, uncertain by half the trip plus half a second", () => {
    // Sent at 12:10:00.000 local, answered at 12:10:00.200; the server stamped "12:00:00".
    const serverDate = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(estimateClockSkew({ sentAt: serverDate + 10 * MIN, receivedAt: serverDate + 10 * MIN + 200, serverDate })).toEqual({ skewMs: 10 * MIN - 400, uncertaintyMs: 600 });
  });

  it("clocks in step: |skew| within the uncertainty", () => {
    const serverDate = Date.UTC(2026, 0, 1, 12, 0, 0);
    const { skewMs, uncertaintyMs } = estimateClockSkew({ sentAt: serverDate + 300, receivedAt: serverDate + 320, serverDate });
    expect(Math.abs(skewMs)).toBeLessThanOrEqual(uncertaintyMs);
  });

  it("formats durations as people read them", () => {
    expect([formatSkew(45_000), formatSkew(-125_000), formatSkew(10 * MIN), formatSkew(3 * 60 * MIN + 10 * MIN)]).toEqual(["45 s", "2 min 5 s", "10 min", "3 h 10 min"]);
  });
});

describe("probeAccessPoint (real sockets)", () => {
  it("a running access point answers and sends its time", async () => {
    const r = await probeAccessPoint({ accessPointUrl: plain.localUrl, aid: "bot.acp.local", now: Date.now });
    expect(r).toMatchObject({ reachable: true, status: 200 });
    expect(r.reachable && r.serverDate !== undefined && Math.abs(r.serverDate - Date.now()) < 5_000).toBe(true);
  });
});

describe("doctor: unreachable access point, each with its fix", () => {
  it("nothing listens on the port", async () => {
    const port = await closedPort();
    const lines = await collectAcpGroupNetworkWarnings({ cfg: cfgWith({ identities: bot(`http://127.0.0.1:${port}`) }), now: Date.now });
    expect(lines).toEqual([
      `- channels.acp-group.identities.bot (bot.acp.local): the access point http://127.0.0.1:${port} cannot be reached: connection refused (nothing listens on that port). ` +
        "Check the address (a local network: is `acp-group server` running?), then set it: `openclaw config set channels.acp-group.identities.bot.accessPointUrl <access point URL>`",
    ]);
  });

  it("a TLS access point whose CA is not trusted; trusted with network.caFile, nothing to report", async () => {
    const untrusted = await collectAcpGroupNetworkWarnings({ cfg: cfgWith({ identities: bot(secure.localUrl) }), now: Date.now });
    expect(untrusted).toHaveLength(1);
    expect(untrusted[0]).toMatch(/^- channels\.acp-group\.identities\.bot \(bot\.acp\.local\): the access point https:\/\/127\.0\.0\.1:\d+ cannot be reached: certificate not trusted/);
    expect(untrusted[0]).toMatch(/Trust the network's CA: `openclaw config set channels\.acp-group\.network\.caFile <the network's ca\.crt>`$/);
    const trusted = await collectAcpGroupNetworkWarnings({ cfg: cfgWith({ network: { caFile: secure.caFile }, identities: bot(secure.localUrl) }), now: Date.now });
    expect(trusted).toEqual([]);
  });

  it("https:// to a server without TLS: the fix names the http:// URL", async () => {
    const wrong = plain.localUrl.replace(/^http:/, "https:");
    const lines = await collectAcpGroupNetworkWarnings({ cfg: cfgWith({ identities: bot(wrong) }), now: Date.now });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`It answers without TLS: \`openclaw config set channels.acp-group.identities.bot.accessPointUrl ${plain.localUrl}\``);
  });

  it("identities sharing an access point: one request, one line per identity", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}`;
    let requests = 0;
    const lines = await collectAcpGroupNetworkWarnings({
      cfg: cfgWith({ identities: { a: { aid: "a.acp.local", accessPointUrl: url }, b: { aid: "b.acp.local", accessPointUrl: url }, off: { aid: "off.acp.local", accessPointUrl: url, enabled: false } } }),
      now: Date.now,
      probe: (p) => {
        requests++;
        return probeAccessPoint(p);
      },
    });
    expect(requests).toBe(1);
    expect(lines.map((l) => l.slice(0, l.indexOf(":")))).toEqual(["- channels.acp-group.identities.a (a.acp.local)", "- channels.acp-group.identities.b (b.acp.local)"]);
  });
});

describe("doctor: clock skew against the server's Date header (real local network)", () => {
  it("this machine 10 min ahead → one finding with the time-sync command", async () => {
    const lines = await collectAcpGroupNetworkWarnings({ cfg: cfgWith({ identities: bot(plain.localUrl) }), now: () => Date.now() + 10 * MIN });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^- channels\.acp-group\.identities\.bot \(bot\.acp\.local\): this machine's clock is (9 min 5\d s|10 min( \d s)?) ahead of the access point http:\/\/127\.0\.0\.1:\d+ \(its Date header\)/);
    expect(lines[0]).toContain("Turn on time sync: `sudo timedatectl set-ntp true`");
  });

  it("3 h behind → 'behind'", async () => {
    const lines = await collectAcpGroupNetworkWarnings({ cfg: cfgWith({ identities: bot(plain.localUrl) }), now: () => Date.now() - 3 * 60 * MIN });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/this machine's clock is (2 h 59 min|3 h) behind the access point/);
  });

  it("in step, or off by less than the limit: nothing to report", async () => {
    const cfg = cfgWith({ identities: bot(plain.localUrl) });
    expect(await collectAcpGroupNetworkWarnings({ cfg, now: Date.now })).toEqual([]);
    expect(await collectAcpGroupNetworkWarnings({ cfg, now: () => Date.now() + CLOCK_SKEW_LIMIT_MS / 2 })).toEqual([]);
  });
});
