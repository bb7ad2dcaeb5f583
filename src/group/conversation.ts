// Whom each line of one group is for: us (a mention, a reply to us, a line opening with our name,
// an engaged speaker's follow-up), another member, or maybe us (an answer to our line, a shared
// conversation). It keeps what decides this — engaged speakers, whom each sender's last line was
// for, our open line to the room, who spoke last, who the members are — and reads the rest from
// the traffic the ingest records (ingest.ts). No timers.
import type { GroupMessage, GroupSettings } from "../types.ts";
import { classifyLeadingAddress, memberKeys, nickKey, type LeadingAddress } from "./addressee.ts";
import { parseBotCommand } from "./command.ts";
import { buildMentionKeywords, checkMention, compileMentionMatcher, replyTargetOf, type MentionMatcher } from "./mention.ts";
import type { MessageSignals, PassiveKind } from "./signals.ts";
import { isServiceEvent } from "./service-event.ts";
import { EngagedSpeakers, type OwnMessages } from "./social.ts";
import { windowSenders, type VitalityWindow } from "./vitality.ts";

export type ConversationSettings = Pick<GroupSettings, "engagedWindowMs" | "continuationMs">;

/** What the tracker reads of the traffic the ingest records. */
export interface TrafficRecord {
  /** Server time of our newest message, or null. */
  readonly lastSelfSpeakAt: number | null;
  /** The vitality window: its senders are the members seen lately. */
  readonly window: VitalityWindow;
  /** Our own messages: a reply to one of them is to us. */
  readonly own: Pick<OwnMessages, "hasId" | "idCount">;
}

/** Whom a sender's last addressed line was for: us, another member, or maybe us (an answer to our line). */
type Target = "us" | "other" | "maybe-us";

/** Whether a line is ours, and why (see #classify). Always all four fields: one shape. */
export type Classified = { isMention: boolean; engaged: boolean; maybeOurs: true | undefined; addressing: string | undefined };

const PLAIN: Classified = Object.freeze({ isMention: false, engaged: false, maybeOurs: undefined, addressing: undefined });
const BOT_COMMAND: Classified = Object.freeze({ isMention: false, engaged: false, maybeOurs: undefined, addressing: "bot-command" });

// Groups of one identity share its keywords: build the key set once, not once per group.
const selfKeysCache = new Map<string, { keys: ReadonlySet<string>; variants: boolean }>();
function selfKeysOf(keywords: readonly string[]): { keys: ReadonlySet<string>; variants: boolean } {
  const cacheKey = keywords.join("\u0000");
  let entry = selfKeysCache.get(cacheKey);
  if (entry === undefined) {
    if (selfKeysCache.size >= 1024) selfKeysCache.clear();
    entry = { keys: new Set(keywords.map(nickKey).filter((k) => k.length >= 2)), variants: keywords.some((k) => nickKey(k) !== k.toLowerCase()) };
    selfKeysCache.set(cacheKey, entry);
  }
  return entry;
}
/**
 * After our own line that addresses nobody in particular (a question to the room, a topic, an
 * answer), the first lines of the next {@link ANSWER_SPEAKERS} other speakers within this time,
 * if they address nobody, may answer it: they go to the model as maybe ours, not as [engaged].
 */
export const ANSWER_WINDOW_MS = 60_000;
export const ANSWER_SPEAKERS = 2;
/**
 * An engaged speaker's line that comes right after someone else's, when our last direct exchange
 * with them (their mention of us, our line to them) is older than this, more likely answers that
 * someone else: it goes to the model as maybe ours, not as [engaged].
 */
export const DIRECT_FRESH_MS = 120_000;
/** Whether `content` names the member `sender` (its nick or aid user part, trailing `_`/`-` optional) as a whole word. */
function namesMember(content: string, sender: string): boolean {
  const keys = memberKeys(sender).filter((k) => k.length >= 3);
  return keys.length > 0 && compileMentionMatcher(keys, "smart")(content);
}

/** Senders whose last line's addressee is remembered (continuations). */
const TARGETS_CAPACITY = 128;
/** Distinct recent senders kept to recognise "bob: …" as addressed to another member. */
const MEMBERS_CAPACITY = 256;

export abstract class ConversationTracker implements TrafficRecord {
  // The traffic record is the subclass's own (the ingest, ingest.ts): read from this object, not
  // through a pointer to another one — observe() runs per message on groups that are cold in cache.
  abstract readonly lastSelfSpeakAt: number | null;
  abstract readonly window: VitalityWindow;
  abstract readonly own: Pick<OwnMessages, "hasId" | "idCount">;
  // Fields sit in memory in declaration order, before the subclass's: what observe() reads for
  // every message comes first, what only an addressed line reads comes last.
  /** Some own name has a variant the keyword matcher does not catch (`jacob` for `jacob_`). */
  readonly #selfVariants: boolean;
  /** Created on the first engagement: until then no per-message read touches it. */
  #engaged: EngagedSpeakers | null = null;
  /** nickKeys of #members, built on demand (only when a line's addressee is asked about). */
  #memberKeys: Set<string> | null = null;
  /** `group.<our ap-domain>`: only its event-shaped messages are events. */
  readonly #serviceAid: string | undefined;
  readonly #matcher: MentionMatcher;
  /** Our latest line when it was a bot command (`!sound | puff`): the group's next line may be its answer. */
  #command: { ts: number; target: string | null } | null = null;
  /** Per sender, whom their last addressed line was for: their next lines may continue it. */
  #targets: Map<string, { to: Target; ts: number }> | null = null;
  /** Our latest line to nobody in particular, and who has spoken since (lower-cased). */
  #openLine: { ts: number; spoken: Set<string> } | null = null;
  /** Who spoke the group's previous line (lower-cased; ours too). */
  #lastSpeaker: string | null = null;
  /** The latest line that mentioned us: our next line naming nobody most likely answers it. */
  #lastMention: { sender: string; ts: number } | null = null;
  readonly #aidLower: string;
  readonly #settings: ConversationSettings;
  /** nickKeys of our own names (name, aid user part, aid, aliases). */
  readonly #selfKeys: ReadonlySet<string>;
  /** Senders seen lately (raw, insertion-ordered, bounded): who counts as another member. */
  #members: Set<string> | null = null;
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
  }) {
    const self = selfKeysOf(p.keywords ?? [p.aid]);
    this.#selfVariants = self.variants;
    this.#serviceAid = p.serviceAid;
    this.#matcher = p.matcher;
    this.#aidLower = p.aid.toLowerCase();
    this.#settings = p.settings;
    this.#selfKeys = self.keys;
    this.#listedMembers = p.listedMembers;
  }

  /**
   * One admitted line from another member: whether it is ours, and why. A reaction or a line that
   * expects no reply (`passive`) is never ours to answer: it only rides along. Runs per message.
   */
  protected observe(m: GroupMessage, signals: MessageSignals, passive: PassiveKind | undefined): Classified {
    // Members are tracked only while addressees matter (an engagement, or a name with variants);
    // before that, the vitality window's senders stand in for them.
    if (this.#selfVariants || this.#engagedCount() > 0) this.#addMember(m.sender);
    else this.#memberKeys = null;
    const classified = passive === undefined ? this.#classify(m, signals) : PLAIN;
    this.#openLine?.spoken.add(m.sender.toLowerCase());
    if (passive === undefined) this.#lastSpeaker = m.sender.toLowerCase();
    return classified;
  }

  /**
   * One of our messages, counted once by the ingest (already in the vitality window): whom it
   * engages — the sender of the message it replies to (`repliedTo`), anyone it names — and whether
   * it is an open line to the room.
   */
  protected ownLine(ts: number, content: string, repliedTo: string | undefined): void {
    const latest = this.#openLine === null || ts >= this.#openLine.ts;
    if (latest) this.#lastSpeaker = this.#aidLower;
    const until = ts + this.#settings.engagedWindowMs;
    let toSomeone = false;
    if (repliedTo !== undefined && repliedTo.toLowerCase() !== this.#aidLower) {
      this.#engage(repliedTo, until, ts, true, true);
      toSomeone = true;
    }
    // Naming someone in our message starts a conversation with them (engaged speakers).
    for (const sender of windowSenders(this.window)) {
      if (sender.toLowerCase() === this.#aidLower) continue;
      if (checkMention(content, buildMentionKeywords({ aid: sender }), "smart")) {
        this.#engage(sender, until, ts, true, true);
        toSomeone = true;
      }
    }
    // A line naming nobody soon after someone mentioned us answers them (our own replies say so
    // in reply_to; a person's or another host's often do not): they are in a conversation with
    // us again, even if they turned to someone else meanwhile.
    const leading = toSomeone ? undefined : this.#leadingAddress(content).to;
    const asked = this.#lastMention;
    if (latest && leading === "none" && asked !== null && ts >= asked.ts && ts - asked.ts <= this.#settings.continuationMs) {
      this.#engage(asked.sender, until, ts, true, true);
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
  protected engagedSpeakersAt(now: number): string[] {
    return this.#engaged === null ? [] : this.#engaged.list(now);
  }

  /**
   * Is the line ours? A mention (keyword, reply to us, `jacob:` for `jacob_`) is; a line that opens
   * by addressing another member is not; a line without an address continues its sender's previous
   * line when it follows within `continuationMs` (a paste, an "err", a second sentence); else a
   * line from someone we are engaged with is ours as an engaged follow-up. The reason is kept.
   */
  #classify(m: GroupMessage, signals: MessageSignals): Classified {
    const ts = m.timestamp;
    // Group events ("Alice joined", "Alice was made admin") name people without talking to them;
    // so do the group service's own events however they are typed.
    if (m.contentType === "event" || m.contentType === "system" || isServiceEvent(m, this.#serviceAid)) return PLAIN;
    // The network's own mention list is the most precise signal there is.
    if (signals.mentionsUs) return this.#toUs(m, true, "metadata-mention");
    if (this.#matcher(m.content)) return this.#toUs(m, true, "mention");
    if (this.#repliesToUs(m.metadata) || (signals.replyTo !== undefined && this.own.hasId(signals.replyTo))) return this.#toUs(m, true, "reply-to-us");
    // The bot answering our command answers us: marked like a follow-up, though the bot does not
    // become an engaged speaker (its next lines are its own).
    if (this.#command !== null && this.#answersCommand(m.content, ts)) {
      return { isMention: false, engaged: true, maybeOurs: undefined, addressing: "answers-our-command" };
    }
    const prev = this.#previousTarget(m.sender, ts);
    if (!this.#selfVariants && this.#engagedCount() === 0 && prev === undefined && !this.#mayAnswerOpenLine(m.sender, ts)) return PLAIN;
    // A bot command (`!info foo`, `!raid | bob`) asks the bot, not us; one naming us was a mention above.
    if (parseBotCommand(m.content) !== null) return BOT_COMMAND;
    const lead = this.#leadingAddress(m.content);
    if (lead.to === "us") return this.#toUs(m, true, `named-us:${lead.name}`);
    if (lead.to === "other") {
      // An engaged speaker whose line addresses another member has turned to them: the
      // conversation with us ends (a mention opens it again). A line addressed *to* an engaged
      // speaker makes the conversation shared (unless we addressed them last and they have not
      // answered yet): their next lines may be for either of us.
      const engaged = this.#engaged;
      if (engaged !== null && engaged.size > 0) {
        const senderLower = m.sender.toLowerCase();
        engaged.disengage((speaker) => speaker === senderLower);
        const key = nickKey(lead.name);
        engaged.share((speaker) => memberKeys(speaker).includes(key));
      }
      this.#setTarget(m.sender, "other", ts);
      return { isMention: false, engaged: false, maybeOurs: undefined, addressing: `addressed-other:${lead.name}` };
    }
    this.#shareNamed(m);
    if (prev === "other") {
      this.#setTarget(m.sender, "other", ts);
      return { isMention: false, engaged: false, maybeOurs: undefined, addressing: "continues-addressed-other" };
    }
    // The rest of an answer to our line (a second sentence, a paste) is maybe ours too.
    if (prev === "maybe-us") {
      this.#setTarget(m.sender, "maybe-us", ts);
      return { isMention: false, engaged: false, maybeOurs: true, addressing: "continues-after-our-line" };
    }
    const state = this.#engaged !== null && this.#engaged.size > 0 ? this.#engaged.stateOf(m.sender, ts) : null;
    if ((prev === "us" || state === "engaged") && this.#turnedToAnother(m.sender, ts)) {
      // Still a conversation with us (it stays open), but this line is not marked [engaged].
      this.#engage(m.sender, ts + this.#settings.engagedWindowMs, ts);
      this.#setTarget(m.sender, "maybe-us", ts);
      return { isMention: false, engaged: false, maybeOurs: true, addressing: "after-another-speaker" };
    }
    if (prev === "us") return this.#toUs(m, false, "continues");
    if (state === "engaged") return this.#toUs(m, false, "engaged");
    // Not marked [engaged], but it may be for us: it goes to the model as promptly as a follow-up.
    if (state === "shared") return { isMention: false, engaged: false, maybeOurs: true, addressing: "shared-conversation" };
    // The speaker's first line after ours, naming nobody: it may answer us. The model judges.
    if (this.#mayAnswerOpenLine(m.sender, ts)) {
      this.#setTarget(m.sender, "maybe-us", ts);
      return { isMention: false, engaged: false, maybeOurs: true, addressing: "after-our-line" };
    }
    return PLAIN;
  }

  /**
   * Our latest line was a bot command: the group's next line, when it opens with the command's
   * target or names nobody, is the bot answering it (a bot answers at once, so only that line).
   * It answers our request, whoever it names: maybe ours, and the model judges. Either way the
   * command is spent.
   */
  #answersCommand(content: string, ts: number): boolean {
    const command = this.#command!;
    this.#command = null;
    if (ts < command.ts || ts - command.ts > ANSWER_WINDOW_MS) return false;
    const lead = this.#leadingAddress(content);
    return lead.to === "none" || (lead.to === "other" && command.target !== null && nickKey(lead.name) === command.target);
  }

  /**
   * The line follows another member's line (not ours, not the sender's own) and our last direct
   * exchange with the sender is older than {@link DIRECT_FRESH_MS}: they are more likely talking
   * with that member than continuing with us.
   */
  #turnedToAnother(sender: string, ts: number): boolean {
    const last = this.#lastSpeaker;
    if (last === null || last === this.#aidLower || last === sender.toLowerCase()) return false;
    const direct = this.#engaged?.lastDirect(sender);
    return direct === undefined || ts - direct > DIRECT_FRESH_MS;
  }

  /** The line is for us: the sender is (still) engaged, and their next lines continue it. */
  #toUs(m: GroupMessage, isMention: boolean, addressing: string): Classified {
    if (isMention) this.#lastMention = { sender: m.sender, ts: m.timestamp };
    this.#engage(m.sender, m.timestamp + this.#settings.engagedWindowMs, m.timestamp, false, isMention);
    this.#setTarget(m.sender, "us", m.timestamp);
    return { isMention, engaged: !isMention, maybeOurs: undefined, addressing };
  }

  #engagedCount(): number {
    return this.#engaged === null ? 0 : this.#engaged.size;
  }

  #engage(sender: string, until: number, now: number, owesAnswer = false, direct = false): void {
    (this.#engaged ??= new EngagedSpeakers()).engage(sender, until, now, owesAnswer, direct);
  }

  #previousTarget(sender: string, ts: number): Target | undefined {
    const t = this.#targets?.get(sender);
    if (t === undefined) return undefined;
    if (ts - t.ts > this.#settings.continuationMs || ts < t.ts) return undefined;
    // We spoke since their line to another: this one may answer us, it continues nothing.
    if (t.to === "other" && this.lastSelfSpeakAt !== null && this.lastSelfSpeakAt > t.ts) return undefined;
    return t.to;
  }

  /**
   * A line that names an engaged speaker anywhere (`lol bob, try xkill`) talks with them: their
   * conversation with us is shared from here on (see {@link EngagedSpeakers.share}).
   */
  #shareNamed(m: GroupMessage): void {
    const engaged = this.#engaged;
    if (engaged === null || engaged.size === 0) return;
    const senderLower = m.sender.toLowerCase();
    const now = m.timestamp;
    const named = engaged.list(now).filter((speaker) => speaker !== senderLower && namesMember(m.content, speaker));
    if (named.length > 0) engaged.share((speaker) => named.includes(speaker));
  }

  #mayAnswerOpenLine(sender: string, ts: number): boolean {
    const open = this.#openLine;
    if (open === null || ts < open.ts || ts - open.ts > ANSWER_WINDOW_MS) return false;
    return open.spoken.size < ANSWER_SPEAKERS && !open.spoken.has(sender.toLowerCase());
  }

  #setTarget(sender: string, to: Target, ts: number): void {
    const map = (this.#targets ??= new Map());
    map.delete(sender);
    map.set(sender, { to, ts });
    if (map.size > TARGETS_CAPACITY) map.delete(map.keys().next().value as string);
  }

  #leadingAddress(content: string): LeadingAddress {
    return classifyLeadingAddress(content, this.#selfKeys, (key, marked) => this.#isMember(key, marked));
  }

  #addMember(sender: string): void {
    const members = (this.#members ??= new Set());
    if (members.has(sender)) return;
    members.add(sender);
    this.#memberKeys = null;
    if (members.size > MEMBERS_CAPACITY) members.delete(members.values().next().value as string);
  }

  /**
   * Someone seen speaking lately is a member for any opening; one known only from the member list
   * counts for a marked opening (`bob:`, `bob,`, `@bob`): a bare word that happens to be a
   * silent member's name is too often just a word.
   */
  #isMember(key: string, marked: boolean): boolean {
    if (this.#selfKeys.has(key)) return false;
    if (marked && this.#listedMembers?.().has(key)) return true;
    if (this.#memberKeys === null) {
      const keys = (this.#memberKeys = new Set());
      for (const s of this.#members ?? []) for (const k of memberKeys(s)) keys.add(k);
      for (const s of windowSenders(this.window)) if (s.toLowerCase() !== this.#aidLower) for (const k of memberKeys(s)) keys.add(k);
    }
    return this.#memberKeys.has(key);
  }

  #repliesToUs(metadata: Readonly<Record<string, unknown>> | null): boolean {
    if (metadata === null || this.own.idCount === 0) return false;
    const target = replyTargetOf(metadata);
    return target !== undefined && this.own.hasId(target);
  }
}
