// Who is talking with whom in a room, and how fast its people answer each other: what the orphan
// path (orphans.ts) needs to tell a question to the room from one inside an exchange, and how long
// to leave a question to people. Read off the lines themselves — a line that opens by addressing
// someone (`bob: …`, `@bob …`; `bob, …` or `bob …` for someone who has spoken, so not `guys, …` or
// `well …`) puts its sender and that member in an exchange — so it is the same for every agent of a room, whatever the agents
// are called and whoever of them is engaged with whom. Bounded; takes server times, reads no clock.
import { leadingName, nickKey } from "./addressee.ts";

/** Speakers remembered (last spoke, last exchange); past it the least recently seen goes. */
export const ROOM_TALK_SPEAKERS = 512;
/** Answer latencies kept: the channel's recent pace, not its whole history. */
export const LATENCY_SAMPLES = 64;
/** Below this many samples the channel's pace is not known yet (the configured grace applies). */
export const MIN_LATENCY_SAMPLES = 8;

export class RoomTalk {
  /** Nick keys of the group's member list (group service, agent.md names): addressed before they speak. */
  readonly #listed: (() => ReadonlySet<string>) | undefined;
  /** nickKey → server time of their latest line. */
  readonly #lastSpoke = new Map<string, number>();
  /** nickKey → server time of the latest line that addressed them or that they addressed to someone. */
  readonly #lastExchange = new Map<string, number>();
  /** nickKey → server time of the latest exchange between two people (both spoke as people). */
  readonly #lastPersonExchange = new Map<string, number>();
  /** Nick keys of speakers whose latest line came from a person. */
  readonly #people = new Set<string>();
  /** Ring of answer latencies (ms): a person's marked address to a member, after that member's latest line. */
  readonly #latencies: number[] = [];
  #next = 0;

  constructor(listed?: () => ReadonlySet<string>) {
    this.#listed = listed;
  }

  /** One admitted line. `human`: its sender is a person (only people's pace is the room's pace). */
  observe(sender: string, content: string, ts: number, human: boolean): void {
    const self = nickKey(sender);
    const to = this.#addressee(self, content);
    if (to !== undefined) {
      touch(this.#lastExchange, self, ts);
      touch(this.#lastExchange, to, ts);
      if (human && this.#people.has(to)) {
        touch(this.#lastPersonExchange, self, ts);
        touch(this.#lastPersonExchange, to, ts);
      }
      const spoke = this.#lastSpoke.get(to);
      if (human && spoke !== undefined && ts >= spoke) this.#sample(ts - spoke);
    }
    touch(this.#lastSpoke, self, ts);
    if (human) this.#people.add(self);
    else this.#people.delete(self);
    if (this.#people.size > ROOM_TALK_SPEAKERS) this.#people.delete(this.#people.values().next().value as string);
  }

  /** Whether `content` opens by addressing someone other than `sender` (see {@link observe}). */
  addressesSomeone(sender: string, content: string): boolean {
    return this.#addressee(nickKey(sender), content) !== undefined;
  }

  /**
   * Whom a line opens by addressing (nickKey): `bob: …` or `@bob …` anyone; `bob, …` or a bare
   * `bob …` only someone who has spoken or is on the member list (`guys, …`, `well …` address nobody).
   */
  #addressee(self: string, content: string): string | undefined {
    const lead = leadingName(content);
    if (lead === null) return undefined;
    const to = nickKey(lead.name);
    if (to.length < 2 || to === self) return undefined;
    return this.#lastSpoke.has(to) || strongMark(content, lead.name) || this.#listed?.().has(to) === true ? to : undefined;
  }

  /** `sender` addressed someone, or was addressed, at server time `since` or later. */
  inExchangeSince(sender: string, since: number): boolean {
    const at = this.#lastExchange.get(nickKey(sender));
    return at !== undefined && at >= since;
  }

  /** `sender` and another person addressed one another at server time `since` or later (exchanges with agents aside). */
  inPersonExchangeSince(sender: string, since: number): boolean {
    const at = this.#lastPersonExchange.get(nickKey(sender));
    return at !== undefined && at >= since;
  }

  /** Median of the recent answer latencies (ms), once {@link MIN_LATENCY_SAMPLES} were seen; else undefined. */
  answerLatencyMs(): number | undefined {
    const n = this.#latencies.length;
    if (n < MIN_LATENCY_SAMPLES) return undefined;
    const sorted = [...this.#latencies].sort((a, b) => a - b);
    return n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  }

  #sample(ms: number): void {
    if (this.#latencies.length < LATENCY_SAMPLES) this.#latencies.push(ms);
    else this.#latencies[this.#next] = ms;
    this.#next = (this.#next + 1) % LATENCY_SAMPLES;
  }
}

/** The opening name is marked beyond doubt: `@bob`, or followed by a colon (`bob:`, `bob：`). */
function strongMark(content: string, name: string): boolean {
  const t = content.trimStart();
  if (t.startsWith("@")) return true;
  const next = t[name.length];
  return next === ":" || next === "：";
}

/** Sets `key` to `ts` as the newest entry; past {@link ROOM_TALK_SPEAKERS} the oldest entry goes. */
function touch(map: Map<string, number>, key: string, ts: number): void {
  const prev = map.get(key);
  map.delete(key);
  map.set(key, prev !== undefined && prev > ts ? prev : ts);
  if (map.size > ROOM_TALK_SPEAKERS) map.delete(map.keys().next().value as string);
}
