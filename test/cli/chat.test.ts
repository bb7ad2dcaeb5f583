// `acp-group chat` in process against the local network (real sockets): joins by the link, shows
// the history, posts `--say` and each piped line as the person, prints live lines, leaves at
// --duration-ms.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { chatCommand } from "../../src/cli/chat.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { tempDir, waitFor } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});

describe("acp-group chat", () => {
  it("history first, then --say and piped lines posted in order and shown live as (you)", async () => {
    const d = tempDir("cli-chat");
    dirs.push(d);
    const dev = await startDevNetwork({ stateDir: d.dir, groups: { lobby: { members: { "bob.acp.local": {} } } }, rateLimit: null });
    try {
      dev.service.post({ groupId: "lobby", sender: "bob.acp.local", content: "earlier line" });
      await dev.identity("erin.acp.local");
      const config = join(d.dir, "erin.json");
      writeFileSync(config, JSON.stringify({ stateDir: join(d.dir, "local-network"), identities: { erin: { aid: "erin.acp.local", accessPointUrl: dev.net.localUrl } } }));
      const out: string[] = [];
      const err: string[] = [];
      const stdin = new PassThrough();
      const run = chatCommand([dev.service.joinLink("lobby"), "--identity", "erin", "--config", config, "--say", "first", "--duration-ms", "2500"], { out: (s) => void out.push(s), err: (s) => void err.push(s) }, { stdin });
      await waitFor(() => out.some((l) => l.includes("erin.acp.local (you): first")), "--say posted and shown");
      stdin.write("second\n\n");
      await waitFor(() => out.some((l) => l.includes("erin.acp.local (you): second")), "the piped line posted and shown");
      expect(await run).toBe(0);
      expect(err).toEqual([]);
      expect(out[0]).toBe("erin.acp.local in [lobby] on group.acp.local");
      expect(out.slice(1).map((l) => l.replace(/^\d\d:\d\d:\d\d /, ""))).toEqual([
        "[lobby] #1 bob.acp.local: earlier line",
        "type a line to post it into [lobby] as erin.acp.local; Ctrl-C to leave",
        "[lobby] #2 erin.acp.local (you): first",
        "[lobby] #3 erin.acp.local (you): second",
      ]);
      expect(dev.service.history("lobby").map((m) => [m.sender, m.content])).toEqual([
        ["bob.acp.local", "earlier line"],
        ["erin.acp.local", "first"],
        ["erin.acp.local", "second"],
      ]);
    } finally {
      await dev.close();
    }
  }, 30_000);
});
