// Configured members nobody registered cannot be claimed (real sockets, real keys): the people of
// a config (the owner above all) are reserved on the local network from its first request; only
// the process that was configured with them certifies them. Agents a config names but does not
// run (`acp-group server`) still register themselves, first key wins.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { startDevNetwork, type DevNetwork } from "../../../src/runtime/dev-network.ts";
import { createHttpClient, createIdentity, signIn } from "../../../src/network/index.ts";
import { serverCommand } from "../../../src/cli/server.ts";
import { tempDir, waitFor } from "../../network/support.ts";

let tmp: ReturnType<typeof tempDir>;
let dev: DevNetwork | undefined;
afterEach(async () => {
  await dev?.close();
  dev = undefined;
  tmp.cleanup();
});

const outsider = (aid: string, url: string) => createIdentity({ aid, stateDir: join(tmp.dir, "outsider"), accessPointUrl: url, noPassphrase: true });

describe("configured members are reserved for the keys this network certifies (real sockets)", () => {
  it("an outsider's sign_cert for the reserved owner is refused (403); the network certifies the owner itself, and its key signs in", async () => {
    tmp = tempDir();
    dev = await startDevNetwork({
      stateDir: tmp.dir,
      groups: { lobby: { members: { "sam.acp.local": { human: true }, "zoe.acp.local": { human: true }, "alice.acp.local": {} } } },
      reserve: ["sam.acp.local", "zoe.acp.local", "alice.acp.local"],
      rateLimit: null,
    });
    await expect(outsider("sam.acp.local", dev.net.localUrl)).rejects.toThrow("sign_cert refused sam.acp.local: sam.acp.local is reserved for a configured member");
    expect(dev.net.counters().refusedCertificates).toBe(1);
    const sam = await dev.identity("sam.acp.local");
    await expect(signIn({ url: `${dev.net.localUrl}/api/message/sign_in`, identity: sam, http: createHttpClient() })).resolves.toMatch(/^[0-9a-f]+$/);
    // Still refused once the configured key holds it (409 would name a registration; 403 names the reservation).
    await expect(outsider("sam.acp.local", dev.net.localUrl)).rejects.toThrow(/reserved for a configured member/);
    // An aid nobody configured is free, as on the real network.
    await expect(outsider("bob.acp.local", dev.net.localUrl)).resolves.toMatchObject({ aid: "bob.acp.local" });
    // The in-process path overrides nothing but reservations: bob is bob's.
    await expect(dev.identity("bob.acp.local")).rejects.toThrow(/already registered to another key/);
  });

  it("`acp-group server` reserves the config's humans and owners: an outsider cannot register `sam`; a configured agent registers itself", async () => {
    tmp = tempDir();
    const configFile = join(tmp.dir, "config.json");
    writeFileSync(configFile, JSON.stringify({ humans: ["sam"], identities: { alice: { aid: "alice.agentcp.io", owner: "olga.agentcp.io" } }, groups: { lobby: {} } }));
    const out: string[] = [];
    const stop = new AbortController();
    const run = serverCommand(["--config", configFile, "--state-dir", tmp.dir], { out: (s) => void out.push(s), err: () => {} }, { signal: stop.signal });
    try {
      await waitFor(() => out.some((l) => l.startsWith("sdk domain:")), "the banner", 10_000);
      const url = out[0]!.slice("access point: ".length);
      await expect(outsider("sam.acp.local", url)).rejects.toThrow(/reserved for a configured member/);
      await expect(outsider("olga.acp.local", url)).rejects.toThrow(/reserved for a configured member/);
      await expect(outsider("alice.acp.local", url)).resolves.toMatchObject({ aid: "alice.acp.local" });
    } finally {
      stop.abort();
      expect(await run).toBe(0);
    }
  });
});
