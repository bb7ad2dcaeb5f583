// One identity store per state dir: the identities the embedded local network made (`start`,
// `server`) are where `id list` / `id show` look, and `id create` of an aid that network already
// registered reuses its key instead of failing with a bare CERT_REFUSED. Real local network, files.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { startDevNetwork, type DevNetwork } from "../../src/runtime/dev-network.ts";
import { tempDir } from "./support.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const capture = () => {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) } };
};

async function demo(): Promise<{ dev: DevNetwork; stateDir: string }> {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const dev = await startDevNetwork({ stateDir: dir, groups: { lobby: { members: {} } } });
  cleanups.push(() => dev.close());
  await dev.identity("alice.acp.local");
  return { dev, stateDir: dir };
}

describe("one identity store per state dir", () => {
  it("id list and id show see the identities the local network made", async () => {
    const { stateDir } = await demo();
    const list = capture();
    expect(await main(["id", "list", "--state-dir", stateDir], list.io)).toBe(0);
    expect(list.out).toHaveLength(1);
    expect(list.out[0]).toMatch(/^alice\.acp\.local {2}\d{4}-\d\d-\d\d {2}valid, \d+ days left {2}issuer: .* {2}\(local network\)$/);
    const show = capture();
    expect(await main(["id", "show", "alice.acp.local", "--state-dir", stateDir], show.io)).toBe(0);
    expect(show.out[0]).toBe("aid:         alice.acp.local");
    expect(show.out.find((l) => l.startsWith("key:"))).toContain("(key opens and matches the certificate)");
  });

  it("id create of an aid the local network registered reuses that key (no CERT_REFUSED)", async () => {
    const { dev, stateDir } = await demo();
    const c = capture();
    expect(await main(["id", "create", "alice.acp.local", "--ap-url", dev.net.localUrl, "--state-dir", stateDir, "--no-passphrase"], c.io)).toBe(0);
    expect(c.out[0]).toBe(`reused alice.acp.local: ${dev.net.localUrl} has it registered already, to the key the local network of this state dir made (${join(stateDir, "local-network", "identities", "alice.acp.local")})`);
    expect(existsSync(join(stateDir, "identities", "alice.acp.local", "private", "alice.acp.local.key"))).toBe(true);
  });

  it("elsewhere, an aid registered to another key is said exactly", async () => {
    const { dev } = await demo();
    const other = tempDir();
    cleanups.push(other.cleanup);
    const c = capture();
    expect(await main(["id", "create", "alice.acp.local", "--ap-url", dev.net.localUrl, "--state-dir", other.dir, "--no-passphrase"], c.io)).toBe(1);
    expect(c.err).toEqual([`acp-group: alice.acp.local is already registered at ${dev.net.localUrl} to another key: choose another name, or bring the key that owns it with \`acp-group id import\``]);
  });
});
