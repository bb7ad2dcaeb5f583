// What the addressing rules read and what they return: one line, its signals, a read-only view
// of the conversation as it stood before that line, and a verdict (whom the line is for, why, and what
// the tracker must remember because of it). Types only, and the verdict builder; the rules are in
// rules.ts, the tracker that keeps the state and applies verdicts in ../conversation.ts.
import type { AddressingReason, GroupMessage, GroupSettings } from "../../types.ts";
import type { LeadingAddress } from "../addressee.ts";
import type { MentionMatcher } from "../mention.ts";
import type { MessageSignals } from "../signals.ts";
import type { EngagedSpeakers, OwnMessages } from "../social.ts";

export type ConversationSettings = Pick<GroupSettings, "engagedWindowMs" | "continuationMs">;

/** Whom a sender's last addressed line was for: us, another member, or maybe us (an answer to our line). */
export type Target = "us" | "other" | "maybe-us";

/** A sender's last addressed line: whom it was for, and its server time. */
export interface SenderTarget {
  readonly to: Target;
  readonly ts: number;
}

/** Our latest line when it was a bot command (`!sound | puff`): the group's next line may be its answer. */
export interface PendingCommand {
  /** Server time of our command. */
  readonly ts: number;
  /** nickKey of the member the answer is for (`puff`), or null for the room. */
  readonly target: string | null;
}

/** Our latest line to nobody in particular (a question to the room, a topic, an answer). */
export interface OpenLine {
  /** Server time of our line. */
  readonly ts: number;
  /** Who has spoken since (lower-cased senders). */
  readonly spoken: ReadonlySet<string>;
}

/** What a rule may ask of the engaged speakers (social.ts). */
export type EngagedView = Pick<EngagedSpeakers, "size" | "stateOf" | "lastDirect">;

/** The line a rule judges: another member's (our own lines never reach the rules). */
export type AddressedLine = Readonly<Pick<GroupMessage, "sender" | "content" | "contentType" | "timestamp" | "metadata">>;

/**
 * The conversation around a line, as the rules see it: read-only, and as it stood before the
 * line (the tracker applies the verdict afterwards). Times are server time; the line's own
 * `timestamp` is the rules' "now".
 */
export interface ConversationView {
  /** `group.<our ap-domain>`: only its event-shaped lines are group events. */
  readonly serviceAid: string | undefined;
  /** Our aid, lower-cased. */
  readonly aidLower: string;
  /** Some own name has a variant the keyword matcher does not catch (`jacob` for `jacob_`). */
  readonly nameVariants: boolean;
  /** Our mention keywords, compiled: true when a text names us. */
  readonly matcher: MentionMatcher;
  /** `line` names us ({@link matcher} on its content, worked out once per line). */
  namesUs(line: AddressedLine): boolean;
  /** Our recent messages: a reply to one of them is to us. */
  readonly own: Pick<OwnMessages, "hasId" | "idCount">;
  /** What `line` opens by addressing: us, another known member, or nobody (worked out once per line). */
  leadingAddress(line: AddressedLine): LeadingAddress;
  /** What `line` addresses with its second word (`lol bob …`, `thanks bob`), as {@link leadingAddress} reads an opening. */
  secondAddress(line: AddressedLine): LeadingAddress;

  readonly settings: ConversationSettings;
  /** Server time of our newest message, or null. */
  readonly lastSelfSpeakAt: number | null;
  readonly command: PendingCommand | null;
  readonly openLine: OpenLine | null;
  /** Who spoke the group's previous line (lower-cased; ours too), or null. */
  readonly lastSpeaker: string | null;
  /** Our newest line was to `sender`: it replied to them, named them, or answered their mention of us. */
  latestLineTo(sender: string): boolean;
  /**
   * A line of ours addressed `sender` and they have said nothing since; and that line asked them a
   * question, or it is our newest line. Their next line answers it.
   */
  awaitsAnswer(sender: string): boolean;
  /** The group's last line was another member's, and it was to us (ours or ours as a follow-up). */
  readonly lastLineToUs: boolean;
  /** The group's last few lines (PRIVATE_EXCHANGE_LINES) are ours and `sender`'s alone, with a turn each way (one of theirs before one of ours). */
  privateExchange(sender: string): boolean;
  /** Speakers we are in a conversation with; null until the first engagement. */
  readonly engaged: EngagedView | null;
  /** Whom `sender`'s last addressed line was for, whenever it was (the rules judge its age). */
  targetOf(sender: string): SenderTarget | undefined;
}

/**
 * Whom a line is for, as the dispatcher sees it:
 * - `us`: addressed to us (a mention; `isMention`);
 * - `us-engaged`: ours as a follow-up in a conversation with us (`engaged`, marked [engaged]);
 * - `maybe-us`: possibly ours: it follows up as promptly, unmarked, and the model judges (`maybeOurs`);
 * - `other`: for another member or a bot: not ours;
 * - `nobody`: plain talk.
 */
export type Whom = "us" | "us-engaged" | "maybe-us" | "other" | "nobody";

/** How the verdict engages the sender, for `engagedWindowMs` from the line. */
export type Engage =
  /** They addressed us: a direct exchange, and the latest mention of us (our next line naming nobody answers it). */
  | "direct"
  /** A follow-up: keeps the conversation open, not a direct exchange. */
  | "follow-up";

/**
 * A rule's answer: whom the line is for, why, and what the tracker remembers because of it. Every
 * verdict has every field (one object shape on the per-message path); build them with {@link verdict}.
 */
export interface Verdict {
  readonly to: Whom;
  /** Printed with the line (replays, the dispatch log); undefined for plain talk. */
  readonly reason: AddressingReason | undefined;
  /** Engage the sender (and, when direct, remember the line as the latest mention of us). */
  readonly engage: Engage | undefined;
  /** Remember whom the sender's line was for: their next lines within `continuationMs` may continue it. */
  readonly target: Target | undefined;
  /**
   * The sender turned to this member (nickKey): their conversation with us ends, and the member's
   * conversation with us is shared (unless we addressed the member last and they owe us an answer).
   */
  readonly turnedTo: string | undefined;
  /** Every engaged speaker the line names anywhere (`so bob was right`) now shares their conversation with us. */
  readonly shareNamed: boolean;
  /** Our pending bot command is spent: the bot answers at once, so only the group's next line can answer it. */
  readonly spendCommand: boolean;
}

/** A verdict with every field present: what `v` leaves out does not happen. */
export function verdict(v: Pick<Verdict, "to"> & Partial<Verdict>): Verdict {
  return {
    to: v.to,
    reason: v.reason,
    engage: v.engage,
    target: v.target,
    turnedTo: v.turnedTo,
    shareNamed: v.shareNamed ?? false,
    spendCommand: v.spendCommand ?? false,
  };
}

/**
 * One addressing rule: a pure function of the line, its signals and the conversation, returning
 * a verdict, or null for no opinion.
 */
export interface AddressingRule {
  /** The rule's name: the reason it prints, for the rules that print one. */
  readonly name: RuleName;
  /** Whom the rule's verdict says the line is for (every verdict it gives says the same). */
  readonly to: Whom;
  readonly decide: (line: AddressedLine, signals: MessageSignals, v: ConversationView) => Verdict | null;
}

/** Rules that leave the line plain talk, printing no reason. */
export const SILENT_RULES = ["passive", "group-event", "nothing-in-play", "plain"] as const;
export type SilentRule = (typeof SILENT_RULES)[number];
export type RuleName = AddressingReason["rule"] | SilentRule;
