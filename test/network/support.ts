// Test helpers for the network layer: temp dirs, a local network, an echo service agent and a
// polling wait. Real sockets, real crypto, real files.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LookupFunction } from "node:net";
import type { ServiceAgent, ServiceAgentHost } from "../../src/server/service-agent.ts";

export function tempDir(prefix = "acp-net-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A service agent that records what it gets and answers `echo:<payload>` on the same session. */
export function echoAgent(aid: string): ServiceAgent & {
  received: Array<{ sessionId: string; from: string; payload: string }>;
  ended: Array<{ sessionId: string; from: string }>;
  host: () => ServiceAgentHost;
} {
  let host: ServiceAgentHost | undefined;
  const received: Array<{ sessionId: string; from: string; payload: string }> = [];
  const ended: Array<{ sessionId: string; from: string }> = [];
  return {
    aid,
    received,
    ended,
    host: () => host!,
    attach(h) {
      host = h;
    },
    onMessage(p) {
      received.push(p);
      host!.send({ sessionId: p.sessionId, to: p.from, payload: `echo:${p.payload}` });
    },
    onSessionEnd(p) {
      ended.push(p);
    },
  };
}

export { waitFor } from "../support/wait-for.ts";

/** Resolves every name to 127.0.0.1 (instead of editing /etc/hosts). */
export const loopbackLookup: LookupFunction = (_host, options, callback) => {
  const cb = callback as unknown as (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;
  if ((options as { all?: boolean }).all) cb(null, [{ address: "127.0.0.1", family: 4 }]);
  else cb(null, "127.0.0.1", 4);
};
