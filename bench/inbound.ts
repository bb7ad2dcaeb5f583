// The full inbound path (DESIGN target: no dearer than parsing the envelope and the frame inside
// it): socket frame text → the session envelope (`{cmd:"session_message", data:{message:"<group
// frame>"}}`) → the group frame (the real transport: src/transport/connection.ts, inbound.ts, the
// group feed, and the ack it sends) → feedBufferGate of the real group client, across 1,000
// groups on one group connection. Side by side, in each round: JSON.parse of the envelope and of
// the frame inside it, nothing else. Prints figures; asserts nothing.
//
// No socket: the channel below is up from the start and plays the group service's side of the
// handshake (register_online, get_cursor, empty pulls). The ack the feed sends for each message
// is answered at once during a timed round, its answer written from a template (the service's
// work kept out of the figure; the client's reading of the answer, and the request's timeout
// armed and cleared, stay in). The envelope is read as src/network/network-agent.ts reads it
// (#onFrame, #onSessionMessage: JSON.parse, the cmd, sender, session and message fields, the
// channel by sender). The fake clock (for the 70 s of quiet between rounds) also times each
// request's timeout, and its timers cost more than node's own: the figure errs on the dear side.
import FakeTimers from "@sinonjs/fake-timers";
import { DEFAULT_GROUP_SETTINGS } from "../src/config/load.ts";
import { closeGroupClientForIdentity, initGroupClientForIdentity, type GroupClient } from "../src/group/group-client.ts";
import type { PeerChannel, PeerChannelEvents } from "../src/network/peer-channel.ts";
import { createGroupConnection } from "../src/transport/connection.ts";
import type { Logger } from "../src/types.ts";

type Fmt = (n: number, digits?: number) => string;
type Stat = (values: readonly number[], q: number) => number;

const SERVICE = "group.bench.agentcp.io";
const SESSION = "bench-session-1";
const WORDS = "the build broke again after the merge can someone look at the flaky test in ci please thanks".split(" ");
const SENDERS = ["bob.agentcp.io", "carol.agentcp.io", "dave.agentcp.io", "erin.agentcp.io", "frank.agentcp.io"];
const ACK_PREFIX = '{"action":"ack_messages","request_id":"';

function text(i: number): string {
  const n = 6 + (i % 9);
  const out: string[] = [];
  for (let k = 0; k < n; k++) out.push(WORDS[(i * 7 + k * 3) % WORDS.length]!);
  return out.join(" ");
}

/** A channel to the group service whose session is up: it answers the handshake, and holds acks during a round. */
class BenchChannel implements PeerChannel {
  readonly peer = SERVICE;
  readonly status = "up" as const;
  readonly sessionId = SESSION;
  readonly #listeners = new Map<keyof PeerChannelEvents, Set<(p: never) => void>>();
  /** While a round is timed: acks are answered at once, from a template. */
  timed = false;
  acks = 0;
  warnings = 0;

  on<E extends keyof PeerChannelEvents>(event: E, listener: (payload: PeerChannelEvents[E]) => void): () => void {
    const set = this.#listeners.get(event) ?? new Set();
    this.#listeners.set(event, set);
    set.add(listener as (p: never) => void);
    return () => set.delete(listener as (p: never) => void);
  }

  /** A payload from the service, as the network layer hands it up (synchronously, like its emitter). */
  deliver(payload: string): void {
    for (const l of this.#listeners.get("message") ?? []) (l as (p: PeerChannelEvents["message"]) => void)({ payload, sessionId: SESSION });
  }

  send(payload: string): boolean {
    if (this.timed && payload.startsWith(ACK_PREFIX)) {
      // {"action":"ack_messages","request_id":"<id>", …: the id is the next quoted string.
      const end = payload.indexOf('"', ACK_PREFIX.length);
      this.acks++;
      this.deliver(`{"action":"ack_messages","request_id":"${payload.slice(ACK_PREFIX.length, end)}","code":0,"data":{}}`);
    } else queueMicrotask(() => this.#answer(payload));
    return true;
  }

  renew(): void {}
  close(): void {}

  #answer(payload: string): void {
    const req = JSON.parse(payload) as { action: string; request_id: string; group_id?: string };
    const data =
      req.action === "get_cursor"
        ? { msg_cursor: { current_msg_id: 0 }, event_cursor: { latest_event_id: 0 } }
        : req.action === "pull_messages"
          ? { messages: [], has_more: false, latest_msg_id: 0 }
          : req.action === "pull_events"
            ? { events: [], has_more: false, latest_event_id: 0 }
            : {};
    this.deliver(JSON.stringify({ action: req.action, request_id: req.request_id, code: 0, ...(req.group_id ? { group_id: req.group_id } : {}), data }));
  }
}

/** The network agent's reading of one socket frame up to its channel (see the header). */
function readSocketFrame(raw: string, channels: ReadonlyMap<string, BenchChannel>): void {
  let frame: { cmd?: unknown; data?: unknown };
  try {
    frame = JSON.parse(raw) as typeof frame;
  } catch {
    return;
  }
  const data = (frame?.data !== null && typeof frame?.data === "object" ? frame.data : {}) as Record<string, unknown>;
  if (frame?.cmd !== "session_message") return;
  const sender = typeof data.sender === "string" ? data.sender : "";
  const sessionId = typeof data.session_id === "string" ? data.session_id : "";
  const payload = typeof data.message === "string" ? data.message : "";
  const ch = channels.get(sender);
  if (ch && ch.sessionId === sessionId) ch.deliver(payload);
}

export async function benchInbound(fmt: Fmt, quantile: Stat): Promise<void> {
  const GROUPS = 1000;
  const PER_ROUND = 20;
  const ROUNDS = Number(process.env.INBOUND_ROUNDS ?? 60);
  const WARMUP = 6;
  const median = (v: readonly number[]) => quantile(v, 0.5);
  const clock = FakeTimers.install({ now: 1_767_600_000_000, toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  try {
    const channel = new BenchChannel();
    const channels = new Map([[SERVICE, channel]]);
    const logger: Logger = { log: (level) => void (level === "warn" || level === "error" ? channel.warnings++ : 0) };
    const groups = Array.from({ length: GROUPS }, (_, g) => `g${g}`);
    const clients = new Map<string, GroupClient>();
    const dispatch = async () => ({ kind: "skipped" as const, reason: "silent" as const });
    for (const groupId of groups) {
      clients.set(groupId, initGroupClientForIdentity({ identityId: "bench", groupId, identity: { aid: "alice.agentcp.io", name: "Alice", aliases: ["ali"] }, settings: DEFAULT_GROUP_SETTINGS, localNow: () => Date.now(), dispatch }));
    }
    let fed = 0;
    const connection = createGroupConnection({
      channel,
      aid: "alice.agentcp.io",
      groups,
      logger,
      heartbeatMs: 0,
      getCursor: () => 0,
      onMessages: (groupId, messages) => {
        fed += messages.length;
        clients.get(groupId)!.feedBufferGate(messages);
      },
    });
    await connection.start();

    const nextId = new Array<number>(GROUPS).fill(0);
    let n = 0;
    let sink = 0;
    const roundFull: number[] = [];
    const roundRatio: number[] = [];
    let fullNs = 0;
    let parseNs = 0;
    let total = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const socketFrames: string[] = [];
      const ts = clock.now;
      for (let i = 0; i < PER_ROUND; i++) {
        for (let g = 0; g < GROUPS; g++) {
          const id = ++nextId[g]!;
          const frame = JSON.stringify({ action: "message_push", group_id: `g${g}`, data: { msg_id: id, sender: SENDERS[(i + g) % SENDERS.length], content: text(++n), content_type: "text", timestamp: ts + i, metadata: null } });
          socketFrames.push(JSON.stringify({ cmd: "session_message", data: { session_id: SESSION, sender: SERVICE, message: frame } }));
        }
      }
      const timed = r >= WARMUP;
      // The floor: JSON.parse of the envelope, then of the group frame inside it.
      let t0 = process.hrtime.bigint();
      for (const s of socketFrames) sink += (JSON.parse((JSON.parse(s) as { data: { message: string } }).data.message) as { data: { msg_id: number } }).data.msg_id;
      const roundParseNs = process.hrtime.bigint() - t0;
      // The path: every frame read, parsed, ordered by its feed and fed; until the last one is in.
      const before = fed;
      channel.timed = true;
      t0 = process.hrtime.bigint();
      for (const s of socketFrames) readSocketFrame(s, channels);
      await new Promise<void>((resolve) => setImmediate(resolve));
      const roundFullNs = process.hrtime.bigint() - t0;
      channel.timed = false;
      if (fed - before !== socketFrames.length) throw new Error(`round ${r}: fed ${fed - before} of ${socketFrames.length} messages`);
      if (timed) {
        fullNs += Number(roundFullNs);
        parseNs += Number(roundParseNs);
        total += socketFrames.length;
        roundFull.push(Number(roundFullNs) / socketFrames.length);
        roundRatio.push(Number(roundFullNs) / Number(roundParseNs));
      }
      // Untimed: 70 s of quiet for buffer gates and cooldowns to dispatch.
      await clock.tickAsync(70_000);
    }
    console.log(`inbound (socket frame → envelope → group frame → feed): ${fmt(total)} timed messages (after ${fmt(WARMUP * PER_ROUND * GROUPS)} warm-up) across ${GROUPS} groups on one group connection, ${PER_ROUND} per group then 70 s`);
    console.log(`  full path          ${fmt(1e9 / median(roundFull))} msgs/s   ${fmt(median(roundFull), 1)} ns/msg   median of ${roundFull.length} rounds`);
    console.log(`  JSON.parse ×2      ${fmt(1e9 / (parseNs / total))} msgs/s   ${fmt(parseNs / total, 1)} ns/msg   envelope + frame, all rounds together`);
    console.log(`  ratio path/parse   ${fmt(median(roundRatio), 2)}   median of per-round ratios (target ≤ 1.00); quartiles ${fmt(quantile(roundRatio, 0.25), 2)}–${fmt(quantile(roundRatio, 0.75), 2)}; all rounds together ${fmt(fullNs / parseNs, 2)}`);
    console.log(`  warnings ${channel.warnings}; ${fmt(channel.acks)} acks sent and answered inside the timed rounds (sink ${sink % 7})`);
    await connection.close();
    for (const c of clients.values()) await closeGroupClientForIdentity(c);
  } finally {
    clock.uninstall();
  }
}
