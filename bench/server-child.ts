// The server side of `npm run bench server`, in its own process so its memory is its own: the
// local network with one group of the bench's members and 50 messages of ~1 KB (every pull of
// 50 answers ~55 KB). Sends { localUrl } when listening; answers "stats" with its memory and
// counters; exits on "stop".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGroupService } from "../src/server/group-service.ts";
import { startLocalNetwork } from "../src/server/network/index.ts";

const members = JSON.parse(process.env.BENCH_MEMBERS ?? "[]") as string[];
const dir = mkdtempSync(join(tmpdir(), "acp-bench-server-"));
const service = createGroupService({ domain: "acp.local", groups: { bench: { members: Object.fromEntries(members.map((a) => [a, {}])) } }, rateLimit: null });
for (let i = 0; i < 50; i++) service.post({ groupId: "bench", sender: members[0]!, content: `${i} ${"lorem ipsum ".repeat(85)}` });
// The bench's members all register from this machine's one address: past the default allowance of new aids.
const net = await startLocalNetwork({ domain: "acp.local", stateDir: join(dir, "net"), socketLimits: { newAidsPerSource: members.length + 10 } });
net.addServiceAgent(service);
const gc = (globalThis as { gc?: () => void }).gc;
process.on("message", async (msg: string) => {
  if (msg === "stats") {
    const m = process.memoryUsage();
    process.send!({ rss: m.rss, heapUsed: m.heapUsed, external: m.external + m.arrayBuffers, counters: net.counters(), requests: service.counters().requests });
  } else if (msg === "gc") {
    gc?.();
    process.send!({ gc: true });
  } else if (msg === "stop") {
    await net.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.send!({ localUrl: net.localUrl, caDir: dir });
