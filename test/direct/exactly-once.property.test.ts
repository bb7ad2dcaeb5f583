// A direct message is answered once across restarts and reconnects: fast-check feeds the real
// direct runtime (fake clock, in-memory network and store, scripted model) what the world sends —
// new lines, the same frame again, the link dropping and coming back, sends that hang and the
// process dying mid-send (its writes after that lost), restarts from what reached the disk — and
// checks, whatever the order: no line is answered twice, and every line is accounted for
// (answered, skipped with a reason, or reported as maybe-answered or dropped), none lost.
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DispatchDecision } from "../../src/monitor/monitor.ts";
import type { DirectMessage } from "../../src/network/direct-link.ts";
import { NetworkError } from "../../src/network/errors.ts";
import { directAgent, memoryNet, memoryStore, type Agent, type MemoryNet } from "./harness.ts";

const DAVE = "dave.acp.local";
const OWNER = "owner.acp.local";

type Cmd =
  | { k: "say" }
  | { k: "dup" }
  | { k: "down" }
  | { k: "up" }
  | { k: "hang" }
  | { k: "crash"; delivered: boolean }
  | { k: "tick"; ms: number };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ k: "say" as const }) },
  { weight: 2, arbitrary: fc.constant({ k: "dup" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "down" as const }) },
  { weight: 2, arbitrary: fc.constant({ k: "up" as const }) },
  { weight: 2, arbitrary: fc.constant({ k: "hang" as const }) },
  { weight: 2, arbitrary: fc.boolean().map((delivered) => ({ k: "crash" as const, delivered })) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 5000 }).map((ms) => ({ k: "tick" as const, ms })) },
);

/** One run of dave's process: its own view of the link and the store, both dead after a crash. */
function incarnation(net: MemoryNet, store: ReturnType<typeof memoryStore>, state: { down: boolean; hang: boolean }) {
  let alive = true;
  const base = net.link(DAVE);
  const hung: Array<{ text: string; release: () => void }> = [];
  const link = Object.assign(Object.create(null) as object, {
    aid: DAVE,
    up: true,
    sent: base.sent,
    onDirect: (l: (m: DirectMessage) => void) => base.onDirect((m) => alive && l(m)),
    sendDirect: async (p: { peer: string; text: string; sessionId?: string | undefined }) => {
      if (!alive || state.down) throw new NetworkError("NOT_CONNECTED", "down", { aid: DAVE });
      if (state.hang) {
        // Handed to the socket and never confirmed: the process may die before it leaves.
        await new Promise<void>((release) => hung.push({ text: p.text, release }));
        if (!alive) throw new NetworkError("CLOSED", "process died", { aid: DAVE });
      }
      return base.sendDirect(p);
    },
  }) as ReturnType<MemoryNet["link"]>;
  const view = {
    ...store,
    saveDirect: (id: string, s: Parameters<NonNullable<typeof store.saveDirect>>[1]) => {
      if (alive) store.saveDirect!(id, s);
    },
  };
  const agent: Agent = directAgent({ net, name: "dave", owner: OWNER, store: view, link, latencyMs: 300, reply: (n, t) => `re ${t} (#${n})` });
  agent.runtime.resume();
  return {
    agent,
    /** The process dies: nothing more from it reaches the link or the disk. A hung send left or not. */
    crash(delivered: boolean) {
      alive = false;
      for (const h of hung.splice(0)) {
        if (delivered) void base.sendDirect({ peer: OWNER, text: h.text });
        h.release();
      }
      agent.runtime.conversations.close();
    },
    release() {
      for (const h of hung.splice(0)) h.release();
    },
  };
}

describe("direct messages are answered once (fast-check: duplicates, drops, hangs, crashes mid-send, restarts)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.UTC(2026, 0, 5, 9));
  });
  afterEach(() => vi.useRealTimers());

  it("no line answered twice, none lost", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 1, maxLength: 40 }), async (cmds) => {
        const net = memoryNet();
        const store = memoryStore();
        const owner = net.link(OWNER);
        const state = { down: false, hang: false };
        let run = incarnation(net, store, state);
        const decisions: DispatchDecision[] = [];
        const logs: Array<{ event: string; fields: Record<string, unknown> }> = [];
        const retire = () => {
          decisions.push(...run.agent.decisions);
          logs.push(...run.agent.logger.entries);
        };
        const said: string[] = [];
        for (const c of cmds) {
          if (c.k === "say") {
            const text = `line ${said.length}`;
            said.push(text);
            await owner.sendDirect({ peer: DAVE, text });
          } else if (c.k === "dup") net.redeliverLast(DAVE);
          else if (c.k === "down") state.down = true;
          else if (c.k === "up") state.down = false;
          else if (c.k === "hang") state.hang = true;
          else if (c.k === "crash") {
            run.crash(c.delivered);
            retire();
            state.hang = false;
            run = incarnation(net, store, state);
          } else await vi.advanceTimersByTimeAsync(c.ms);
        }
        // The world settles: the link is up, nothing hangs, time passes.
        state.down = false;
        state.hang = false;
        run.release();
        await vi.advanceTimersByTimeAsync(120_000);
        retire();
        run.agent.runtime.close();

        // Which lines each reply went out for (the reply names the newest line of its batch).
        const answered = new Map<string, number>();
        for (const w of net.wire.filter((w) => w.from === DAVE)) {
          const line = /^re (line \d+) \(#\d+\)$/.exec(w.text)?.[1];
          if (line) answered.set(line, (answered.get(line) ?? 0) + 1);
        }
        for (const [line, n] of answered) expect(n, `${line} answered ${n} times`).toBe(1);
        // Every key dave was given ends settled one way, once: sent, skipped for a reason, maybe-answered, dropped.
        const ends = new Map<string, string[]>();
        const note = (key: string, how: string) => ends.set(key, [...(ends.get(key) ?? []), how]);
        for (const d of decisions) {
          if (d.outcome.kind === "skipped" && d.outcome.reason === "group-closed") continue;
          if (d.outcome.kind === "retry") continue;
          for (const id of d.messageIds) note(id, d.outcome.kind === "sent" ? "sent" : d.outcome.reason);
        }
        for (const e of logs) {
          if (e.event === "direct.maybe-answered") for (const k of e.fields.keys as string[]) note(k, "maybe-answered");
          if (e.event === "direct.dropped") for (const k of (e.fields.keys as string[] | undefined) ?? [e.fields.key as string]) note(k, "dropped");
          if (e.event === "direct.not-answered") for (const k of (e.fields.keys as string[] | undefined) ?? [e.fields.key as string]) note(k, `not-answered:${String(e.fields.reason)}`);
        }
        const received = new Set(net.wire.filter((w) => w.to === DAVE).map((w) => w.text));
        expect([...received].sort()).toEqual([...said].sort());
        // One end per key; as many keys as lines said (a duplicate frame has the key of its first delivery).
        for (const [key, how] of ends) expect(how, `key ${key}`).toHaveLength(1);
        expect(ends.size).toBe(said.length);
        // Nothing is left waiting on disk.
        expect(store.direct.get("dave")?.peers.flatMap((p) => p.pending) ?? []).toEqual([]);
      }),
      { numRuns: 150 },
    );
  }, 120_000);
});
