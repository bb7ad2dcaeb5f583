// Issue 30.3: `join` on a config at mode 600 holding secrets must leave it 600 (it used to write a
// temp file with default permissions and rename it over the config: 644, world-readable), keep
// each secret exactly as written (a reference stays a reference, never resolved into the file),
// and never add one it does not need. Real files, a real join against the local network.
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/index.ts";
import { addJoinToConfig, recordIdentityAccess } from "../../src/cli/join-config.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { createFileHistoryStore } from "../../src/server/history-store.ts";
import { tempDir } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});
const dir = () => {
  const d = tempDir("config-secrets");
  dirs.push(d);
  return d.dir;
};
const mode = (file: string) => statSync(file).mode & 0o777;

describe("files that may hold a secret stay 0600", () => {
  it("`acp-group join` on a config at 600 with llm.apiKey and network.seedPassword: still 600, secrets byte-identical", async () => {
    const d = dir();
    const dev = await startDevNetwork({ stateDir: d, groups: { lobby: { members: {} } } });
    try {
      await dev.identity("dave.acp.local");
      const stateDir = join(d, "local-network");
      const file = join(d, "dave.json");
      const original = {
        stateDir,
        llm: { apiKey: "sk-test-do-not-leak" },
        network: { seedPassword: { source: "env", provider: "default", id: "DAVE_SEED" } },
        identities: { dave: { aid: "dave.acp.local", accessPointUrl: dev.net.localUrl } },
      };
      writeFileSync(file, JSON.stringify(original, null, 2));
      chmodSync(file, 0o600);
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(["join", dev.service.joinLink("lobby"), "--identity", "dave", "--config", file], { out: (s) => void out.push(s), err: (s) => void err.push(s) });
      expect(err).toEqual([]);
      expect(code).toBe(0);
      expect(out[1]).toMatch(/^updated .*dave\.json: group lobby;/);
      expect(mode(file)).toBe(0o600);
      const written = JSON.parse(readFileSync(file, "utf8")) as typeof original & { groups: unknown };
      expect(written.llm).toEqual(original.llm);
      expect(written.network).toEqual(original.network);
      expect(written.groups).toEqual({ lobby: {} });
    } finally {
      await dev.close();
    }
  }, 30_000);

  it("a config `join` creates is 600 and holds no secret, even with ACP_SEED_PASSWORD and OPENAI_API_KEY set", () => {
    const d = dir();
    const file = join(d, "new.json");
    const saved = { seed: process.env.ACP_SEED_PASSWORD, key: process.env.OPENAI_API_KEY };
    process.env.ACP_SEED_PASSWORD = "seed-from-env";
    process.env.OPENAI_API_KEY = "sk-from-env";
    try {
      addJoinToConfig(file, { aid: "dave.acp.local", groupId: "lobby", groupAccessPoint: "acp.local", caFile: join(d, "ca.crt"), stateDir: d });
    } finally {
      if (saved.seed === undefined) delete process.env.ACP_SEED_PASSWORD;
      else process.env.ACP_SEED_PASSWORD = saved.seed;
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
    }
    expect(mode(file)).toBe(0o600);
    const text = readFileSync(file, "utf8");
    expect(text).not.toMatch(/seed-from-env|sk-from-env|seedPassword|apiKey/);
  });

  it("a config at 644 is 600 once `join` rewrites it: every config is written as one that may hold a secret", () => {
    const d = dir();
    const file = join(d, "open.json");
    writeFileSync(file, JSON.stringify({ identities: { dave: { aid: "dave.acp.local" } } }));
    chmodSync(file, 0o644);
    addJoinToConfig(file, { aid: "dave.acp.local", groupId: "lobby", groupAccessPoint: "acp.local" });
    expect(mode(file)).toBe(0o600);
  });

  it("what `id create` records beside an identity is written atomically at 600", () => {
    const d = dir();
    recordIdentityAccess(d, "dave.acp.local", { accessPointUrl: "https://acp3.acp.local:8443" });
    const file = join(d, "identities", "dave.acp.local", "access-point.json");
    expect(mode(file)).toBe(0o600);
  });
});

describe("the local group service's history (it holds invite codes)", () => {
  it("is created 600", () => {
    const d = dir();
    const file = join(d, "group-service", "history.jsonl");
    const store = createFileHistoryStore(file);
    store.setInviteCode("lobby", "secret-code");
    expect(mode(file)).toBe(0o600);
  });
});
