// `acp-group run` in process against a local network it did not start (real sockets): signs the
// config's identity in to its configured access point, prints the transcript and the decision
// lines, posts a typed line as its first identity, and stops with state saved when told to.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { runCommand } from "../../src/cli/run.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { tempDir, waitFor } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});

describe("acp-group run", () => {
  it("answers a mention on a network it did not start, posts a typed line, and stops with exit 0", async () => {
    const d = tempDir("cli-run");
    dirs.push(d);
    const dev = await startDevNetwork({ stateDir: d.dir, groups: { lobby: { members: { "alice.acp.local": {}, "bob.acp.local": {} } } }, rateLimit: null });
    try {
      await dev.identity("alice.acp.local");
      const config = join(d.dir, "alice.json");
      writeFileSync(
        config,
        JSON.stringify({
          stateDir: join(d.dir, "local-network"),
          identities: { alice: { aid: "alice.acp.local", accessPointUrl: dev.net.localUrl } },
          groups: { lobby: { delay: { enabled: false }, cooldownMs: 0 } },
        }),
      );
      const out: string[] = [];
      const stdin = new PassThrough();
      const stop = new AbortController();
      const run = runCommand(["--config", config], { out: (s) => void out.push(s), err: () => {} }, { signal: stop.signal, stdin });
      await waitFor(() => out.includes("agents online: alice (alice.acp.local) in lobby"), "alice online", 15_000);
      dev.service.post({ groupId: "lobby", sender: "bob.acp.local", content: "Alice, are you there?" });
      await waitFor(() => out.some((l) => / alice \[lobby\] dispatch #\d+ mention .* → sent /.test(l)), "the decision line", 15_000);
      await waitFor(() => dev.service.history("lobby").some((m) => m.sender === "alice.acp.local"), "alice's answer stored");
      stdin.write("typed by the operator\n");
      await waitFor(() => dev.service.history("lobby").some((m) => m.content === "typed by the operator"), "the typed line posted");
      stop.abort();
      expect(await run).toBe(0);
      expect(out.slice(-2)).toEqual(["stopping (aborted) — saving state", "stopped"]);
      expect(out.some((l) => / \[lobby\] #1 bob\.acp\.local: Alice, are you there\?$/.test(l))).toBe(true);
      expect(out.some((l) => / \[lobby\] #2 alice\.acp\.local \(agent\): \[offline responder\] heard bob\.acp\.local/.test(l))).toBe(true);
      expect(dev.service.history("lobby").at(-1)).toMatchObject({ sender: "alice.acp.local", content: "typed by the operator" });
    } finally {
      await dev.close();
    }
  }, 60_000);
});
