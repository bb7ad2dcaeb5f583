// Whom each line of one group is for: us (a mention, a reply to us, a line opening with our name,
// an engaged speaker's follow-up), another member, or maybe us (an answer to our line, a shared
// conversation). The decision is the table of addressing rules (addressing/rules.ts); this
// tracker keeps what they read — engaged speakers, whom each sender's last line was for, our
// pending bot command and open line, who spoke last, who the members are — shows it to them as a
// read-only view (addressing/view.ts), and applies the winning verdict in one update step. It
// also hears our own lines (whom they engage, whether they open a line to the room), and reads
// the rest from the traffic record it is given (the ingest, ingest.ts). No timers.
import type { GroupMessage } from "../types.ts";
import { classifyLeadingAddress, memberKeys, nickKey, type LeadingAddress } from "./addressee.ts";
import { KnownMembers } from "./addressing/members.ts";
import { afterFirstWord } from "./addressing/opening.ts";
import { decideAddressing, PRIVATE_EXCHANGE_LINES } from "./addressing/rules.ts";
import type { AddressedLine, ConversationSettings, ConversationView, PendingCommand, SenderTarget, Target, Verdict } from "./addressing/view.ts";
import { parseBotCommand } from "./command.ts";
import { buildMentionKeywords, checkMention, compileMentionMatcher, type MentionMatcher } from "./mention.ts";
import type { MessageSignals, PassiveKind } from "./signals.ts";
import { EngagedSpeakers, type OwnMessages } from "./social.ts";
import { windowSenders, type VitalityWindow } from "./vitality.ts";

export type { ConversationSettings, Verdict } from "./addressing/view.ts";

/** What the tracker reads of the traffic the ingest records (ingest.ts). */
export interface TrafficRecord {
  /** Server time of our newest message, or null. */
  readonly lastSelfSpeakAt: number | null;
  /** The vitality window: its senders are the members seen lately. */
  readonly window: VitalityWindow;
  /** Our own messages: a reply to one of them is to us. */
  readonly own: Pick<OwnMessages, "hasId" | "idCount">;
}

/**
 * Senders whose last addressed line is remembered. A continuation follows within
 * `continuationMs` (30 s by default): far fewer people than this speak in that time, and the
 * map stays bounded however many pass through.
 */
export const TARGETS_CAPACITY = 128;

/** Distinct keyword lists kept in {@link selfKeysCache}: one per identity, far more than one host runs. */
const SELF_KEYS_CACHE_CAPACITY = 1024;
// Groups of one identity share its keywords: build the key set once, not once per group.
const selfKeysCache = new Map<string, { keys: ReadonlySet<string>; variants: boolean }>();
function selfKeysOf(keywords: readonly string[]): { keys: ReadonlySet<string>; variants: boolean } {
  const cacheKey = keywords.join("\u0000");
  let entry = selfKeysCache.get(cacheKey);
  if (entry === undefined) {
    if (selfKeysCache.size >= SELF_KEYS_CACHE_CAPACITY) selfKeysCache.clear();
    entry = { keys: new Set(keywords.map(nickKey).filter((k) => k.length >= 2)), variants: keywords.some((k) => nickKey(k) !== k.toLowerCase()) };
    selfKeysCache.set(cacheKey, entry);
  }
  return entry;
}

const NO_ADDRESS: LeadingAddress = Object.freeze({ to: "none" });
/** A line that ends with a question mark (ASCII or fullwidth), trailing spaces aside. */
const QUESTION_END = /[?？]\s*$/u;

/** Whether `content` names the member `sender` (its nick or aid user part, trailing `_`/`-` optional) as a whole word. */
function namesMember(content: string, sender: string): boolean {
  // Two-letter nick keys are too often ordinary words to count as naming someone mid-line.
  const keys = memberKeys(sender).filter((k) => k.length >= 3);
  return keys.length > 0 && compileMentionMatcher(keys, "smart")(content);
}

export class ConversationTracker implements ConversationView {
  // Fields sit in memory in declaration order: what observe() and the rules read for every line
  // come first, what only an addressed line reads comes last. (observe() runs per message on
  // groups that are cold in cache: the fewer cache lines it touches the better.)
  /** The leading address of the line being decided (#leadOf), worked out on the first ask. */
  #leadOf: AddressedLine | null = null;
  /** Whether the line being decided (#namedOf) names us, worked out on the first ask. */
  #namedOf: AddressedLine | null = null;
  #named = false;
  readonly #serviceAid: string | undefined;
  readonly #matcher: MentionMatcher;
  #command: PendingCommand | null = null;
  /** Some own name has a variant the keyword matcher does not catch (`jacob` for `jacob_`). */
  readonly #nameVariants: boolean;
  /** Created on the first engagement: until then no per-message read touches it. */
  #engaged: EngagedSpeakers | null = null;
  /** Per sender, whom their last addressed line was for (insertion-ordered, bounded). */
  #targets: Map<string, SenderTarget> | null = null;
  /** Our latest line to nobody in particular, and who has spoken since (lower-cased). */
  #openLine: { ts: number; spoken: Set<string> } | null = null;
  /** Created on the first line whose addressee matters. */
  #members: KnownMembers | null = null;
  /** Who spoke the group's previous line (lower-cased; ours too). */
  #lastSpeaker: string | null = null;
  /** Whether that line (another member's) was to us: its verdict was ours or ours as a follow-up. */
  #lastLineToUs = false;
  /** Who spoke the group's last {@link PRIVATE_EXCHANGE_LINES} lines, newest last (lower-cased; ours too). */
  readonly #recentSpeakers: string[] = [];
  #lead: LeadingAddress | null = null;
  readonly #traffic: TrafficRecord;
  /** Senders our newest line was to (lower-cased): the one it replies to, those it names, the mention it answers. */
  #latestTo: Set<string> | null = null;
  /**
   * Senders our lines addressed who have said nothing since (lower-cased; insertion-ordered,
   * bounded), and whether one of those lines asked them a question.
   */
  #awaiting: Map<string, boolean> | null = null;
  /** The latest line that mentioned us: our next line naming nobody most likely answers it. */
  #lastMention: { sender: string; ts: number } | null = null;
  readonly #aidLower: string;
  readonly #settings: ConversationSettings;
  /** nickKeys of our own names (name, aid user part, aid, aliases). */
  readonly #selfKeys: ReadonlySet<string>;
  readonly #listedMembers: (() => ReadonlySet<string>) | undefined;

  constructor(p: {
    aid: string;
    /** Our mention keywords (seed §4.2): their nick variants address us too. */
    keywords?: readonly string[] | undefined;
    matcher: MentionMatcher;
    settings: ConversationSettings;
    serviceAid: string | undefined;
    /** Nick keys of the group's member list (group service, agent.md names): members who may not have spoken yet. */
    listedMembers?: (() => ReadonlySet<string>) | undefined;
    /** The traffic the ingest records: read, never written. */
    traffic: TrafficRecord;
  }) {
    const self = selfKeysOf(p.keywords ?? [p.aid]);
    this.#traffic = p.traffic;
    this.#serviceAid = p.serviceAid;
    this.#matcher = p.matcher;
    this.#nameVariants = self.variants;
    this.#aidLower = p.aid.toLowerCase();
    this.#settings = p.settings;
    this.#selfKeys = self.keys;
    this.#listedMembers = p.listedMembers;
  }

  /**
   * One admitted line from another member: the rules' verdict on it, applied. A reaction or a
   * line that expects no reply (`passive`) is never ours to answer: it only rides along. Runs per
   * message.
   */
  observe(m: GroupMessage, signals: MessageSignals, passive: PassiveKind | undefined): Verdict {
    // Members are remembered only while addressees matter (an engagement, or a name with
    // variants); before that, the vitality window's senders stand in for them.
    if (this.#nameVariants || (this.#engaged !== null && this.#engaged.size > 0)) this.#knownMembers().add(m.sender);
    else this.#members?.refresh();
    this.#leadOf = null;
    this.#namedOf = null;
    const v = decideAddressing(m, signals, this);
    this.#apply(m, v);
    // Whatever the verdict: the sender has spoken since our open line, and spoke last (unless
    // the line only rides along).
    const senderLower = m.sender.toLowerCase();
    this.#openLine?.spoken.add(senderLower);
    this.#engaged?.spoke(senderLower);
    this.#awaiting?.delete(senderLower);
    if (passive === undefined) {
      this.#spoke(senderLower);
      this.#lastLineToUs = v.to === "us" || v.to === "us-engaged";
    }
    return v;
  }

  /** The update step: the verdict's effects on the conversation, in this order. */
  #apply(m: GroupMessage, v: Verdict): void {
    const ts = m.timestamp;
    if (v.spendCommand) this.#command = null;
    const engaged = this.#engaged;
    if (v.turnedTo !== undefined && engaged !== null && engaged.size > 0) {
      const senderLower = m.sender.toLowerCase();
      const key = v.turnedTo;
      engaged.disengage((speaker) => speaker === senderLower);
      engaged.share((speaker) => memberKeys(speaker).includes(key));
    }
    if (v.shareNamed && engaged !== null && engaged.size > 0) {
      const senderLower = m.sender.toLowerCase();
      const named = engaged.list(ts).filter((speaker) => speaker !== senderLower && namesMember(m.content, speaker));
      if (named.length > 0) engaged.share((speaker) => named.includes(speaker));
    }
    if (v.engage !== undefined) {
      const direct = v.engage === "direct";
      if (direct) this.#lastMention = { sender: m.sender, ts };
      this.#engage(m.sender, ts + this.#settings.engagedWindowMs, ts, false, direct);
    }
    if (v.target !== undefined) this.#setTarget(m.sender, v.target, ts);
  }

  /**
   * One of our messages, counted once by the ingest (already in the vitality window): whom it
   * engages — the sender of the message it replies to (`repliedTo`), anyone it names — and whether
   * it is an open line to the room.
   */
  ownLine(ts: number, content: string, repliedTo: string | undefined): void {
    const latest = this.#openLine === null || ts >= this.#openLine.ts;
    if (latest) {
      this.#spoke(this.#aidLower);
      this.#latestTo?.clear();
    }
    const until = ts + this.#settings.engagedWindowMs;
    const question = QUESTION_END.test(content);
    let toSomeone = false;
    if (repliedTo !== undefined && repliedTo.toLowerCase() !== this.#aidLower) {
      this.#engageByUs(repliedTo, until, ts, latest, question);
      toSomeone = true;
    }
    // Naming someone in our message starts a conversation with them (engaged speakers).
    for (const sender of windowSenders(this.#traffic.window)) {
      if (sender.toLowerCase() === this.#aidLower) continue;
      if (checkMention(content, buildMentionKeywords({ aid: sender }), "smart")) {
        this.#engageByUs(sender, until, ts, latest, question);
        toSomeone = true;
      }
    }
    // A line naming nobody soon after someone mentioned us answers them (our own replies say so
    // in reply_to; a person's or another host's often do not): they are in a conversation with
    // us again, even if they turned to someone else meanwhile.
    const leading = toSomeone ? undefined : this.#leadingAddressOf(content).to;
    const asked = this.#lastMention;
    if (latest && leading === "none" && asked !== null && ts >= asked.ts && ts - asked.ts <= this.#settings.continuationMs) {
      this.#engageByUs(asked.sender, until, ts, true, question);
    }
    // A line of ours to someone is answered by them (engaged above); one that names nobody (a
    // question to the room, a topic, an answer) may be answered by anyone.
    if (latest) this.#openLine = toSomeone || leading === "other" ? null : { ts, spoken: new Set() };
    if (latest) {
      const command = parseBotCommand(content);
      this.#command = command === null ? null : { ts, target: command.target === null ? null : nickKey(command.target) };
    }
  }

  /** Speakers engaged at server time `now` (lower-cased). */
  engagedSpeakersAt(now: number): string[] {
    return this.#engaged === null ? [] : this.#engaged.list(now);
  }

  // The view the rules read (ConversationView): the conversation as it stood before the line.
  get serviceAid(): string | undefined {
    return this.#serviceAid;
  }
  get aidLower(): string {
    return this.#aidLower;
  }
  get nameVariants(): boolean {
    return this.#nameVariants;
  }
  get matcher(): MentionMatcher {
    return this.#matcher;
  }
  namesUs(line: AddressedLine): boolean {
    if (this.#namedOf !== line) {
      this.#named = this.#matcher(line.content);
      this.#namedOf = line;
    }
    return this.#named;
  }
  get own(): Pick<OwnMessages, "hasId" | "idCount"> {
    return this.#traffic.own;
  }
  get settings(): ConversationSettings {
    return this.#settings;
  }
  get lastSelfSpeakAt(): number | null {
    return this.#traffic.lastSelfSpeakAt;
  }
  get command(): PendingCommand | null {
    return this.#command;
  }
  get openLine(): { readonly ts: number; readonly spoken: ReadonlySet<string> } | null {
    return this.#openLine;
  }
  get lastSpeaker(): string | null {
    return this.#lastSpeaker;
  }
  get lastLineToUs(): boolean {
    return this.#lastSpeaker !== this.#aidLower && this.#lastLineToUs;
  }
  latestLineTo(sender: string): boolean {
    return this.#latestTo?.has(sender.toLowerCase()) ?? false;
  }
  awaitsAnswer(sender: string): boolean {
    const key = sender.toLowerCase();
    const asked = this.#awaiting?.get(key);
    return asked === true || (asked === false && this.latestLineTo(key));
  }
  privateExchange(sender: string): boolean {
    const recent = this.#recentSpeakers;
    if (recent.length < PRIVATE_EXCHANGE_LINES) return false;
    const them = sender.toLowerCase();
    // A turn each way: a line of theirs before one of ours (their line being decided is the turn back).
    let theirs = false;
    let turn = false;
    for (const s of recent) {
      if (s === this.#aidLower) turn ||= theirs;
      else if (s === them) theirs = true;
      else return false;
    }
    return turn;
  }
  get engaged(): Pick<EngagedSpeakers, "size" | "stateOf" | "lastDirect"> | null {
    return this.#engaged;
  }
  leadingAddress(line: AddressedLine): LeadingAddress {
    if (this.#leadOf !== line || this.#lead === null) {
      this.#lead = this.#leadingAddressOf(line.content);
      this.#leadOf = line;
    }
    return this.#lead;
  }
  secondAddress(line: AddressedLine): LeadingAddress {
    const rest = afterFirstWord(line.content);
    return rest === null ? NO_ADDRESS : this.#leadingAddressOf(rest);
  }
  targetOf(sender: string): SenderTarget | undefined {
    return this.#targets?.get(sender);
  }

  #spoke(speaker: string): void {
    this.#lastSpeaker = speaker;
    const recent = this.#recentSpeakers;
    recent.push(speaker);
    if (recent.length > PRIVATE_EXCHANGE_LINES) recent.shift();
  }

  /** Our line at `now` is to `sender`: they owe us an answer; `latest`: it is our newest line; `question`: it asks one. */
  #engageByUs(sender: string, until: number, now: number, latest: boolean, question: boolean): void {
    this.#engage(sender, until, now, true, true);
    const key = sender.toLowerCase();
    if (latest) (this.#latestTo ??= new Set()).add(key);
    const awaiting = (this.#awaiting ??= new Map());
    const asked = awaiting.get(key) === true || question;
    awaiting.delete(key);
    awaiting.set(key, asked);
    if (awaiting.size > TARGETS_CAPACITY) awaiting.delete(awaiting.keys().next().value as string);
  }

  #engage(sender: string, until: number, now: number, owesAnswer: boolean, direct: boolean): void {
    (this.#engaged ??= new EngagedSpeakers()).engage(sender, until, now, owesAnswer, direct);
  }

  #setTarget(sender: string, to: Target, ts: number): void {
    const map = (this.#targets ??= new Map());
    map.delete(sender);
    map.set(sender, { to, ts });
    if (map.size > TARGETS_CAPACITY) map.delete(map.keys().next().value as string);
  }

  #leadingAddressOf(content: string): LeadingAddress {
    const members = this.#knownMembers();
    return classifyLeadingAddress(content, this.#selfKeys, members.isMember);
  }

  #knownMembers(): KnownMembers {
    return (this.#members ??= new KnownMembers({ selfKeys: this.#selfKeys, aidLower: this.#aidLower, listed: this.#listedMembers, window: this.#traffic.window }));
  }
}
