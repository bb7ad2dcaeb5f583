// The attackers of `npm run bench -- server`, in their own process so their work does not slow
// the well-behaved member being measured: BENCH_FLOODERS sockets, each with a session, that
// flood pull requests and never read. "go" starts the flood, "stop" ends it and reports `sent`;
// "big" has BENCH_BIG_AIDS sockets send one 60 MB frame each and reports how they were closed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIdentity } from "../src/network/index.ts";
import { openRawSession, type RawSession } from "./raw-session.ts";

const localUrl = process.env.BENCH_URL!;
const aids = JSON.parse(process.env.BENCH_FLOOD_AIDS ?? "[]") as string[];
const bigAids = JSON.parse(process.env.BENCH_BIG_AIDS ?? "[]") as string[];
/** What a flooder keeps queued on its side once the server stops reading it. */
const QUEUE_BYTES = 256 * 1024;
const dir = mkdtempSync(join(tmpdir(), "acp-bench-flood-"));
const ids = await Promise.all(aids.map((aid) => createIdentity({ aid, stateDir: dir, accessPointUrl: localUrl, noPassphrase: true })));
const sessions: RawSession[] = [];
for (const identity of ids) sessions.push(await openRawSession({ localUrl, identity, service: "group.acp.local" }));
for (const s of sessions) s.stopReading();
const bigIds = await Promise.all(bigAids.map((aid) => createIdentity({ aid, stateDir: dir, accessPointUrl: localUrl, noPassphrase: true })));
const big: RawSession[] = [];
for (const identity of bigIds) big.push(await openRawSession({ localUrl, identity, service: "group.acp.local" }));
let sent = 0;
let seq = 0;
let pump: ReturnType<typeof setInterval> | undefined;
process.on("message", (msg: string) => {
  if (msg === "go") {
    pump = setInterval(() => {
      for (const s of sessions) {
        // Bounded per tick: a socket the server already closed may still look open from here.
        for (let n = 0; n < 200 && s.ws.readyState === 1 && s.ws.bufferedAmount < QUEUE_BYTES; n++) {
          s.send({ action: "pull_messages", request_id: `f${++seq}`, group_id: "bench", params: { after_msg_id: 0, limit: 50 } });
          sent++;
        }
      }
    }, 5);
  } else if (msg === "halt") {
    clearInterval(pump);
    process.send!({ halted: true });
  } else if (msg === "big") {
    const frame = "x".repeat(60 * 1024 * 1024);
    void Promise.all(
      big.map((s) => {
        s.ws.send(frame);
        return Promise.race([s.closed, new Promise<number>((r) => setTimeout(() => r(0), 10_000))]);
      }),
    ).then((codes) => process.send!({ bigClosed: codes }));
  } else if (msg === "stop") {
    clearInterval(pump);
    for (const s of [...sessions, ...big]) s.close();
    rmSync(dir, { recursive: true, force: true });
    process.send!({ sent }, () => process.exit(0));
  }
});
process.send!({ ready: true });
