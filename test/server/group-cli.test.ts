// `acp-group server` and `acp-group join` end to end: the printed lines (access point, CA, join
// links), TLS from the local CA, and joining a group by its printed link with a real identity.
// Real sockets, real keys, a temp state dir.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { parseJoinLink } from "../../src/cli/join.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { serverCommand } from "../../src/cli/server.ts";
import { tempDir, waitFor } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});
function dir(): string {
  const d = tempDir("group-cli");
  dirs.push(d);
  return d.dir;
}
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) } };
}

describe("acp-group server", () => {
  it("--tls --domain: prints the access point, the CA and a join link per group, each on its own line; stops on abort", async () => {
    const d = dir();
    const configFile = join(d, "config.json");
    writeFileSync(configFile, JSON.stringify({ humans: ["you"], identities: { alice: { aid: "alice.agentcp.io" } }, groups: { lobby: {}, "side-room": {} } }));
    const c = capture();
    const stop = new AbortController();
    const run = serverCommand(["--tls", "--domain", "test.local", "--config", configFile, "--state-dir", d], c.io, { signal: stop.signal });
    await waitFor(() => c.out.some((l) => l.startsWith("sdk domain:")), "the banner");
    expect(c.out[0]).toMatch(/^access point: https:\/\/127\.0\.0\.1:\d+$/);
    expect(c.out[1]).toMatch(/^ca: .*ca\.crt$/);
    const caFile = c.out[1]!.slice("ca: ".length);
    expect(existsSync(caFile)).toBe(true);
    expect(readFileSync(caFile, "utf8")).toContain("BEGIN CERTIFICATE");
    expect(c.out[2]).toMatch(/^join lobby: https:\/\/group\.test\.local\/lobby\?code=[A-Za-z0-9_-]+$/);
    expect(c.out[3]).toMatch(/^join side-room: https:\/\/group\.test\.local\/side-room\?code=[A-Za-z0-9_-]+$/);
    const port = /:(\d+)$/.exec(c.out[0]!)![1];
    expect(c.out[4]).toBe(`sdk domain: test.local:${port} · state: ${d} · Ctrl-C to stop`);
    stop.abort();
    expect(await run).toBe(0);
    expect(c.out.at(-1)).toBe("stopped");
  });

  it("refuses a bad domain or port with a usage error", async () => {
    const c = capture();
    expect(await main(["server", "--domain", "no_dots"], c.io)).toBe(2);
    expect(c.err.join("\n")).toContain("expected `--domain` to be a domain");
    const c2 = capture();
    expect(await main(["server", "--port", "70000"], c2.io)).toBe(2);
    expect(c2.err.join("\n")).toContain("expected `--port` to be at most 65535");
  });
});

describe("acp-group join", () => {
  it("parses links: code → invite, none → request, anything else is a usage error naming it", () => {
    expect(parseJoinLink("https://group.agentcp.io/room-1?code=abc")).toEqual({ service: "group.agentcp.io", accessPoint: "agentcp.io", groupId: "room-1", code: "abc" });
    expect(parseJoinLink("https://group.other.example/g2")).toEqual({ service: "group.other.example", accessPoint: "other.example", groupId: "g2", code: undefined });
    expect(() => parseJoinLink("not a link")).toThrow(/expected a link/);
    expect(() => parseJoinLink("https://chat.agentcp.io/room")).toThrow(/group\.<access point>/);
    expect(() => parseJoinLink("https://group.agentcp.io/")).toThrow(/group id/);
  });

  it("joins by the printed link with a real identity (use_invite_code), then asks without a code (request_join → pending)", async () => {
    const d = dir();
    const dev = await startDevNetwork({
      stateDir: d,
      groups: { lobby: { members: { "alice.acp.local": {} } }, private: { members: {} } },
    });
    try {
      await dev.identity("dave.acp.local");
      const configFile = join(d, "dave.json");
      writeFileSync(configFile, JSON.stringify({
        stateDir: join(d, "local-network"),
        network: { caFile: dev.net.caFile },
        identities: { dave: { aid: "dave.acp.local", accessPointUrl: dev.net.localUrl } },
      }));
      const link = dev.service.joinLink("lobby");
      const c = capture();
      expect(await main(["join", link, "--identity", "dave", "--config", configFile], c.io)).toBe(0);
      expect(c.out[0]).toBe("dave.acp.local → lobby on group.acp.local: joined");
      // The config now has everything `run` needs: the identity was there, the group is added.
      expect(c.out[1]).toBe(`updated ${configFile}: group lobby; start it with: npx acp-group run --config ${configFile}`);
      expect(JSON.parse(readFileSync(configFile, "utf8")).groups).toEqual({ lobby: {} });
      expect(dev.service.members("lobby")).toContain("dave.acp.local");

      const c2 = capture();
      expect(await main(["join", "https://group.acp.local/private", "--identity", "dave", "--config", configFile, "--message", "hi"], c2.io)).toBe(0);
      expect(c2.out).toEqual([
        "dave.acp.local → private on group.acp.local: pending",
        `the group's owner decides; run \`acp-group join\` again once accepted to add private to ${configFile}`,
      ]);
      expect(JSON.parse(readFileSync(configFile, "utf8")).groups).toEqual({ lobby: {} });
      expect(dev.service.pendingJoinRequests("private")).toEqual(["dave.acp.local"]);

      const c3 = capture();
      expect(await main(["join", `${link}x`, "--identity", "dave", "--config", configFile], c3.io)).toBe(1);
      expect(c3.err.join("\n")).toContain("1011");
    } finally {
      await dev.close();
    }
  });
});
