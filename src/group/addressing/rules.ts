// Whom a line is for, as an ordered table of named rules. Each rule is a pure function of the
// line, its signals and a read-only view of the conversation as it stood before the line
// (view.ts), returning a verdict or null (no opinion); the first verdict wins, and the last rule
// always has one. The tracker (../conversation.ts) then applies the winning verdict's effects in
// one step. The order is the one docs/behaviour.md documents (a test holds the two together).
// Rules never change the view, keep no state, and read no clock but the line's server time.
import { nickKey } from "../addressee.ts";
import { parseBotCommand } from "../command.ts";
import { replyTargetOf } from "../mention.ts";
import { afterFirstWord, opensWithStrongAddress } from "./opening.ts";
import { inSecondPerson } from "./second-person.ts";
import { isServiceEvent } from "../service-event.ts";
import { passiveKindOf, type MessageSignals } from "../signals.ts";
import { verdict, type AddressedLine, type AddressingRule, type ConversationView, type Target, type Verdict, type Whom } from "./view.ts";

/**
 * How long after our own line to nobody in particular (a question to the room, a topic) a line
 * that names nobody may answer it, and how long after our bot command the group's next line may
 * be the bot's answer. A minute: long enough for a person to read and type a short answer, short
 * enough that the room has usually moved on to something else by then. Chosen with the rule
 * (2bb04be) on the nine dev logs; the suite's per-rule figures show what `after-our-line` earns.
 */
export const ANSWER_WINDOW_MS = 60_000;
/**
 * How many other speakers' first lines after our open line may answer it. Two: a question to the
 * room is most often answered by the next one or two people who speak; the third speaker on is
 * far more often carrying on their own talk. Chosen with the rule (2bb04be) on the dev logs.
 */
export const ANSWER_SPEAKERS = 2;
/**
 * An engaged speaker's line right after another member's line, when our last direct exchange
 * with them (their mention of us, our line to them) is older than this, more likely answers that
 * member than us. Two minutes — twice the answer window: a live exchange with us has a line
 * every minute or so. Chosen (3eaf929) on the dev logs: pooled flag precision 0.81 → 0.865 at
 * the same recall.
 */
export const DIRECT_FRESH_MS = 120_000;

/**
 * How many of the group's last lines must be ours and one sender's alone for their exchange with
 * us to be private: three — their line, ours, theirs (or ours, theirs, ours) — the least that
 * holds a turn each way. Not a time: on a busy channel other people's lines break an exchange
 * within seconds, on a quiet one it can last minutes, so it follows the channel's pace.
 */
export const PRIVATE_EXCHANGE_LINES = 3;

// Verdicts without data are built once: no allocation for them on the per-message path.
const PLAIN = verdict({ to: "nobody" });
const TO_US = {
  "metadata-mention": verdict({ to: "us", reason: { rule: "metadata-mention" }, engage: "direct", target: "us" }),
  mention: verdict({ to: "us", reason: { rule: "mention" }, engage: "direct", target: "us" }),
  "reply-to-us": verdict({ to: "us", reason: { rule: "reply-to-us" }, engage: "direct", target: "us" }),
} as const;
const ANSWERS_COMMAND = verdict({ to: "us-engaged", reason: { rule: "answers-our-command" }, spendCommand: true });
const NOTHING_IN_PLAY = verdict({ to: "nobody", spendCommand: true });
const BOT_COMMAND = verdict({ to: "other", reason: { rule: "bot-command" }, spendCommand: true });
// From here on the line's opening addresses nobody: it shares the conversation of every engaged speaker it names.
const after = { shareNamed: true, spendCommand: true } as const;
const CONTINUES_OTHER = verdict({ to: "other", reason: { rule: "continues-addressed-other" }, target: "other", ...after });
const PRIVATE_EXCHANGE = verdict({ to: "us-engaged", reason: { rule: "private-exchange" }, target: "us", ...after });
const ADDRESSED_BY_ANOTHER = verdict({ to: "maybe-us", reason: { rule: "addressed-by-another" }, engage: "follow-up", target: "maybe-us", ...after });
const BACK_AND_FORTH = verdict({ to: "us-engaged", reason: { rule: "back-and-forth" }, target: "maybe-us", ...after });
const CONTINUES_AFTER_OUR_LINE = verdict({ to: "maybe-us", reason: { rule: "continues-after-our-line" }, target: "maybe-us", ...after });
const AFTER_ANOTHER_SPEAKER = verdict({ to: "maybe-us", reason: { rule: "after-another-speaker" }, engage: "follow-up", target: "maybe-us", ...after });
const CONTINUES = verdict({ to: "us-engaged", reason: { rule: "continues" }, engage: "follow-up", target: "us", ...after });
const ENGAGED = verdict({ to: "us-engaged", reason: { rule: "engaged" }, engage: "follow-up", target: "us", ...after });
const SHARED = verdict({ to: "maybe-us", reason: { rule: "shared-conversation" }, ...after });
const SECOND_PERSON = verdict({ to: "us-engaged", reason: { rule: "second-person" }, target: "maybe-us", ...after });
const AFTER_OUR_LINE = verdict({ to: "maybe-us", reason: { rule: "after-our-line" }, target: "maybe-us", ...after });
const PLAIN_UNADDRESSED = verdict({ to: "nobody", ...after });

// Facts several rules read, worked out from the line and the view.

/**
 * Whom the sender's previous addressed line was for, if this line may continue it: within
 * `continuationMs` after it, and — for a line to another member — with no line of ours since
 * (this one may answer us, and so continues nothing).
 */
export function previousTarget(line: AddressedLine, v: ConversationView): Target | undefined {
  const t = v.targetOf(line.sender);
  const ts = line.timestamp;
  if (t === undefined || ts - t.ts > v.settings.continuationMs || ts < t.ts) return undefined;
  if (t.to === "other" && v.lastSelfSpeakAt !== null && v.lastSelfSpeakAt > t.ts) return undefined;
  return t.to;
}

/**
 * The line may answer our open line: within {@link ANSWER_WINDOW_MS} of it, from one of the
 * first {@link ANSWER_SPEAKERS} other speakers since, and the sender's first line since.
 */
export function mayAnswerOpenLine(line: AddressedLine, v: ConversationView): boolean {
  const open = v.openLine;
  const ts = line.timestamp;
  if (open === null || ts < open.ts || ts - open.ts > ANSWER_WINDOW_MS) return false;
  return open.spoken.size < ANSWER_SPEAKERS && !open.spoken.has(line.sender.toLowerCase());
}

/** The sender's engagement at the line's time: inside a conversation of ours alone, a shared one, or none. */
export function engagedState(line: AddressedLine, v: ConversationView): "engaged" | "shared" | "contested" | null {
  return v.engaged !== null && v.engaged.size > 0 ? v.engaged.stateOf(line.sender, line.timestamp) : null;
}

/**
 * The line follows another member's line (not ours, not the sender's own) and our last direct
 * exchange with the sender is older than {@link DIRECT_FRESH_MS}.
 */
export function turnedToAnother(line: AddressedLine, v: ConversationView): boolean {
  const last = v.lastSpeaker;
  const sender = line.sender.toLowerCase();
  if (last === null || last === v.aidLower || last === sender || v.awaitsAnswer(sender)) return false;
  const direct = v.engaged?.lastDirect(sender);
  return direct === undefined || line.timestamp - direct > DIRECT_FRESH_MS;
}

/**
 * The sender's line to us is being continued, but another member's line came between, and our
 * newest line was not to the sender: whoever spoke last is as likely their addressee as we are
 * (turn taking). A continuation whose exchange we kept up ourselves — our newest line was to
 * them — is not interrupted by someone else's line, nor is one where that member's line was to
 * us (two people asking us at once): they were not talking to the sender.
 */
export function continuationInterrupted(line: AddressedLine, v: ConversationView): boolean {
  const last = v.lastSpeaker;
  if (last === null || last === v.aidLower || last === line.sender.toLowerCase() || v.lastLineToUs) return false;
  return !v.latestLineTo(line.sender) && !v.awaitsAnswer(line.sender);
}

function repliesToUs(line: AddressedLine, signals: MessageSignals, v: ConversationView): boolean {
  if (signals.replyTo !== undefined && v.own.hasId(signals.replyTo)) return true;
  if (line.metadata === null || v.own.idCount === 0) return false;
  const target = replyTargetOf(line.metadata);
  return target !== undefined && v.own.hasId(target);
}

/** Our pending command is answered: the line opens with the command's target, or names nobody, within the answer window. */
function answersCommand(line: AddressedLine, v: ConversationView): boolean {
  const command = v.command;
  const ts = line.timestamp;
  if (command === null || ts < command.ts || ts - command.ts > ANSWER_WINDOW_MS) return false;
  const lead = v.leadingAddress(line);
  return lead.to === "none" || (lead.to === "other" && command.target !== null && nickKey(lead.name) === command.target);
}

const rule = (name: AddressingRule["name"], to: Whom, decide: AddressingRule["decide"]): AddressingRule => Object.freeze({ name, to, decide });

/** A reaction, or a line flagged as expecting no reply: it rides along in a batch, never ours to answer. */
export const passive = rule("passive", "nobody", (_line, signals) => (passiveKindOf(signals) !== undefined ? PLAIN : null));

/** Group events ("Alice joined", "Alice was made admin") name people without talking to them; so do the group service's own events however they are typed. */
export const groupEvent = rule("group-event", "nobody", (line, _signals, v) =>
  line.contentType === "event" || line.contentType === "system" || isServiceEvent(line, v.serviceAid) ? PLAIN : null,
);

/** The network's own mention list names us: the most precise signal there is. */
export const metadataMention = rule("metadata-mention", "us", (_line, signals) => (signals.mentionsUs ? TO_US["metadata-mention"] : null));

/**
 * The line names us, but opens by addressing another member and our name is not the next word
 * (`bob: ask alice, she knows`, not `bob, alice: …` which addresses both of us): it talks about
 * us to them. Maybe ours; the sender has turned to them.
 */
export const mentionToOther = rule("mention-to-other", "maybe-us", (line, _signals, v) => {
  if (!v.namesUs(line)) return null;
  const lead = v.leadingAddress(line);
  if (lead.to !== "other" || namesUsSecond(line, v)) return null;
  return verdict({ to: "maybe-us", reason: { rule: "mention-to-other", name: lead.name }, turnedTo: nickKey(lead.name), target: "other", spendCommand: true });
});

/** The line's second word is one of our names (`bob alice: …`, `bob, alice …`): the opening addresses us too. */
function namesUsSecond(line: AddressedLine, v: ConversationView): boolean {
  const rest = afterFirstWord(line.content);
  if (rest === null) return false;
  const word = /^[^\s:,，、：]+/u.exec(rest)?.[0];
  return word !== undefined && v.matcher(word);
}

/** The line names one of our keywords (name, aid, aliases) as a word. */
export const mention = rule("mention", "us", (line, _signals, v) => (v.namesUs(line) ? TO_US.mention : null));

/** The line replies to one of our messages (`group_meta.reply_to` or the metadata's reply target). */
export const replyToUs = rule("reply-to-us", "us", (line, signals, v) => (repliesToUs(line, signals, v) ? TO_US["reply-to-us"] : null));

/**
 * Our latest line was a bot command (`!sound | puff`) and this is the group's next line, opening
 * with the command's target or naming nobody: the bot answering us. Marked like a follow-up,
 * though the bot does not become an engaged speaker (its next lines are its own).
 */
export const answersOurCommand = rule("answers-our-command", "us-engaged", (line, _signals, v) => (answersCommand(line, v) ? ANSWERS_COMMAND : null));

/**
 * Nothing makes the line's addressee matter: we are engaged with nobody, the sender has no recent
 * addressed line, the line cannot answer an open line of ours, and our names have no variants the
 * keyword matcher misses. Plain talk, and its addressee is not even worked out (the common case,
 * kept cheap); nothing is remembered of it.
 */
export const nothingInPlay = rule("nothing-in-play", "nobody", (line, _signals, v) =>
  !v.nameVariants && (v.engaged === null || v.engaged.size === 0) && previousTarget(line, v) === undefined && !mayAnswerOpenLine(line, v) ? NOTHING_IN_PLAY : null,
);

/** A bot command (`!info foo`, `!raid | bob`) asks the bot, not us; one naming us was a mention above. */
export const botCommand = rule("bot-command", "other", (line) => (parseBotCommand(line.content) !== null ? BOT_COMMAND : null));

/** The line opens with a marked address to a variant of our name (`jacob:` for `jacob_`). */
export const namedUs = rule("named-us", "us", (line, _signals, v) => {
  const lead = v.leadingAddress(line);
  return lead.to === "us" ? verdict({ to: "us", reason: { rule: "named-us", name: lead.name }, engage: "direct", target: "us", spendCommand: true }) : null;
});

/**
 * The line opens by addressing another known member (`bob: …`, `bob, …`, `@bob …`, or a bare
 * `bob …` for someone seen speaking): not ours. An engaged sender has turned to them.
 */
export const addressedOther = rule("addressed-other", "other", (line, _signals, v) => {
  const lead = v.leadingAddress(line);
  if (lead.to !== "other") return null;
  return verdict({ to: "other", reason: { rule: "addressed-other", name: lead.name }, turnedTo: nickKey(lead.name), target: "other", spendCommand: true });
});

/**
 * The line's second word addresses another member (`lol bob, try xkill`, `thanks bob`, `heh bob
 * you missed a space`): a short word (a laugh, a thanks, an "ok") before a name is how people
 * turn to someone in any chat. Not ours, as {@link addressedOther}.
 */
export const namedOther = rule("named-other", "other", (line, _signals, v) => {
  const second = v.secondAddress(line);
  if (second.to !== "other") return null;
  return verdict({ to: "other", reason: { rule: "named-other", name: second.name }, turnedTo: nickKey(second.name), target: "other", spendCommand: true });
});

/** The sender's previous line addressed another member, within `continuationMs`, and we have not spoken since: this continues it. */
export const continuesAddressedOther = rule("continues-addressed-other", "other", (line, _signals, v) => (previousTarget(line, v) === "other" ? CONTINUES_OTHER : null));

/**
 * The sender's previous line was maybe an answer to our line, and since then the group's last
 * {@link PRIVATE_EXCHANGE_LINES} lines are theirs and ours alone: a private exchange with us. Ours,
 * as an engaged follow-up.
 */
export const privateExchange = rule("private-exchange", "us-engaged", (line, _signals, v) =>
  previousTarget(line, v) === "maybe-us" && v.privateExchange(line.sender) ? PRIVATE_EXCHANGE : null,
);

/**
 * The sender's previous line (within `continuationMs`) was maybe an answer to our line, we spoke
 * after it, and ours is the group's last line: they answered us, we answered them, this is their
 * turn. Ours; their next lines stay maybe ours (it opens no conversation of its own).
 */
export const backAndForth = rule("back-and-forth", "us-engaged", (line, _signals, v) => {
  if (v.lastSpeaker !== v.aidLower || previousTarget(line, v) !== "maybe-us") return null;
  const ours = v.lastSelfSpeakAt;
  if (ours === null || ours < v.targetOf(line.sender)!.ts) return null;
  // Our line was to the room or to the sender, not to someone else; and the line does not open
  // with an address beyond doubt (`bob: …`, `@bob`) to someone, known or not.
  if (v.openLine?.ts !== ours && !v.latestLineTo(line.sender)) return null;
  return opensWithStrongAddress(line.content) ? null : BACK_AND_FORTH;
});

/** The sender's previous line was maybe an answer to our line: this is the rest of it (a second sentence, a paste). */
export const continuesAfterOurLine = rule("continues-after-our-line", "maybe-us", (line, _signals, v) => (previousTarget(line, v) === "maybe-us" ? CONTINUES_AFTER_OUR_LINE : null));

/**
 * The sender is talking with us (their previous line was to us, or they are engaged with us alone),
 * but this line comes right after another member's, long after our last direct exchange: more
 * likely an answer to that member. Still a conversation with us (it stays open), but maybe ours,
 * not [engaged].
 */
export const afterAnotherSpeaker = rule("after-another-speaker", "maybe-us", (line, _signals, v) => {
  const toUs = previousTarget(line, v) === "us";
  if (toUs && continuationInterrupted(line, v)) return AFTER_ANOTHER_SPEAKER;
  return (toUs || engagedState(line, v) === "engaged" || engagedState(line, v) === "contested") && turnedToAnother(line, v) ? AFTER_ANOTHER_SPEAKER : null;
});

/** The sender's previous line was to us, within `continuationMs` (a paste, an "err", a second sentence): ours. */
export const continues = rule("continues", "us-engaged", (line, _signals, v) => (previousTarget(line, v) === "us" ? CONTINUES : null));

/**
 * The sender is in a conversation with us alone and owed us an answer, but someone else addressed
 * them after we did and they have not spoken since: a reply goes to whoever spoke to you last, so
 * this more likely answers that member. Maybe ours; the conversation stays open.
 */
export const addressedByAnother = rule("addressed-by-another", "maybe-us", (line, _signals, v) => (engagedState(line, v) === "contested" ? ADDRESSED_BY_ANOTHER : null));

/** The sender is in a conversation with us alone: ours, as an engaged follow-up. */
export const engaged = rule("engaged", "us-engaged", (line, _signals, v) => (engagedState(line, v) === "engaged" ? ENGAGED : null));

/** The sender is in a conversation with us that another member joined: maybe ours. */
export const sharedConversation = rule("shared-conversation", "maybe-us", (line, _signals, v) => (engagedState(line, v) === "shared" ? SHARED : null));

/**
 * The sender's first line after our open line comes right after it (ours is the group's last line)
 * and speaks in the second person (`why would you need that?`, `can you not set both?`): an
 * answer to us. Ours, [engaged]; like {@link backAndForth} it engages nobody, their next lines
 * stay maybe ours.
 */
export const secondPerson = rule("second-person", "us-engaged", (line, _signals, v) =>
  v.lastSpeaker === v.aidLower && mayAnswerOpenLine(line, v) && inSecondPerson(line.content) ? SECOND_PERSON : null,
);

/** The sender's first line after our open line, naming nobody: it may answer us. The model judges. */
export const afterOurLine = rule("after-our-line", "maybe-us", (line, _signals, v) => (mayAnswerOpenLine(line, v) ? AFTER_OUR_LINE : null));

/** No rule claims the line: plain talk. */
export const plain = rule("plain", "nobody", () => PLAIN_UNADDRESSED);

/** The rules in the order they are asked; the first verdict wins. */
export const ADDRESSING_RULES: readonly AddressingRule[] = Object.freeze([
  passive,
  groupEvent,
  metadataMention,
  mentionToOther,
  mention,
  replyToUs,
  answersOurCommand,
  nothingInPlay,
  botCommand,
  namedUs,
  addressedOther,
  namedOther,
  continuesAddressedOther,
  privateExchange,
  backAndForth,
  continuesAfterOurLine,
  afterAnotherSpeaker,
  continues,
  addressedByAnother,
  engaged,
  sharedConversation,
  secondPerson,
  afterOurLine,
  plain,
]);

/**
 * The first rule's verdict on the line: the rules of {@link ADDRESSING_RULES}, in its order, each
 * called by name from a call site of its own. (A loop over the table has one call site that sees
 * every rule, so V8 inlines none of them: on the per-message path that took the ingest bench from
 * 0.95 to 1.15 × JSON.parse. A test holds this list to the table's order.)
 */
export function decideAddressing(line: AddressedLine, signals: MessageSignals, v: ConversationView): Verdict {
  return (
    passive.decide(line, signals, v) ??
    groupEvent.decide(line, signals, v) ??
    metadataMention.decide(line, signals, v) ??
    mentionToOther.decide(line, signals, v) ??
    mention.decide(line, signals, v) ??
    replyToUs.decide(line, signals, v) ??
    answersOurCommand.decide(line, signals, v) ??
    nothingInPlay.decide(line, signals, v) ??
    botCommand.decide(line, signals, v) ??
    namedUs.decide(line, signals, v) ??
    addressedOther.decide(line, signals, v) ??
    namedOther.decide(line, signals, v) ??
    continuesAddressedOther.decide(line, signals, v) ??
    privateExchange.decide(line, signals, v) ??
    backAndForth.decide(line, signals, v) ??
    continuesAfterOurLine.decide(line, signals, v) ??
    afterAnotherSpeaker.decide(line, signals, v) ??
    continues.decide(line, signals, v) ??
    addressedByAnother.decide(line, signals, v) ??
    engaged.decide(line, signals, v) ??
    sharedConversation.decide(line, signals, v) ??
    secondPerson.decide(line, signals, v) ??
    afterOurLine.decide(line, signals, v) ??
    plain.decide(line, signals, v)
  ) ?? PLAIN;
}
