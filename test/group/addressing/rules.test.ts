// One table per addressing rule: rows of (what the row shows, the line, the view of the
// conversation, the rule's verdict — null for no opinion). Each rule is asked alone, so its table
// is its specification; the order in which the table asks them is tested at the end.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as rules from "../../../src/group/addressing/rules.ts";
import { verdict, type AddressingRule, type Verdict } from "../../../src/group/addressing/view.ts";
import { line, S, T, viewOf, type Line, type ViewSpec } from "./view.ts";

type Row = readonly [what: string, line: Line, view: ViewSpec, expected: Verdict | null];

function table(rule: AddressingRule, rows: readonly Row[]): void {
  describe(`rule ${rule.name}`, () => {
    it.each(rows)("%s", (_what, l, view, expected) => {
      const got = rule.decide(l.line, l.signals, viewOf(view));
      expect(got).toEqual(expected);
      // A rule's verdicts all say what the rule declares (the suite and the docs read `to`).
      if (got !== null) expect(got.to).toBe(rule.to);
    });
  });
}

const PLAIN = verdict({ to: "nobody" });
const toUs = (rule: "metadata-mention" | "mention" | "reply-to-us") => verdict({ to: "us", reason: { rule }, engage: "direct", target: "us" });
/** The rules after the leading-address rules share the conversation of engaged speakers the line names, and spend our command. */
const after = { shareNamed: true, spendCommand: true } as const;
const hello = line("hello");
const bobEngaged = { speaker: "bob", until: T + 600 * S };

table(rules.passive, [
  ["a reaction rides along", line("Alice 👍", { signals: { reaction: { reaction: "👍" } } }), {}, PLAIN],
  ["a line flagged no-reply-expected rides along", line("fyi", { signals: { noReplyExpected: true } }), {}, PLAIN],
  ["an ordinary line: no opinion", hello, {}, null],
]);

table(rules.groupEvent, [
  ["content type event", line("Alice joined", { contentType: "event" }), {}, PLAIN],
  ["content type system", line("Alice was made admin", { contentType: "system" }), {}, PLAIN],
  [
    "the group service's event-shaped message, however typed",
    line("Alice left", { sender: "group.agentcp.io", metadata: { event_type: "member_left" } }),
    { serviceAid: "group.agentcp.io" },
    PLAIN,
  ],
  ["a member's post carrying event_type is their own words", line("Alice left", { metadata: { event_type: "x" } }), { serviceAid: "group.agentcp.io" }, null],
  ["a member's text", line("Alice, hi"), {}, null],
]);

table(rules.metadataMention, [
  ["the metadata's mention list names us", line("look at this", { signals: { mentionsUs: true } }), {}, toUs("metadata-mention")],
  ["no metadata mention", line("Alice, look at this"), {}, null],
]);

const mentionToOther = (name: string, key: string) =>
  verdict({ to: "maybe-us", reason: { rule: "mention-to-other", name }, turnedTo: key, target: "other", spendCommand: true });
table(rules.mentionToOther, [
  ["`carol: ask Alice, she wrote it`: names us, talks to carol", line("carol: ask Alice, she wrote it"), { members: ["carol"] }, mentionToOther("carol", "carol")],
  ["a bare `carol …` for a member seen speaking, naming us later", line("carol I think Alice knows"), { members: ["carol"] }, mentionToOther("carol", "carol")],
  ["`carol, Alice: …` opens by addressing both", line("carol, Alice: did it work?"), { members: ["carol"] }, null],
  ["`carol Alice …`: our name is the next word, both are addressed", line("carol Alice isnt answering, could you help?"), { members: ["carol"] }, null],
  ["`Alice, carol says …` opens with us", line("Alice, carol says it works"), { members: ["carol"] }, null],
  ["names us, opens with no member", line("so Alice was right"), { members: ["carol"] }, null],
  ["opens with carol, does not name us", line("carol: did it work?"), { members: ["carol"] }, null],
]);

table(rules.mention, [
  ["our name as a word", line("can Alice look at the build?"), {}, toUs("mention")],
  ["our aid", line("ping alice.agentcp.io"), {}, toUs("mention")],
  ["our name inside another word is not a mention", line("no malice meant"), {}, null],
  ["no name of ours", line("the build is red"), {}, null],
]);

table(rules.replyToUs, [
  ["group_meta.reply_to is one of our messages", line("yes", { signals: { replyTo: "100" } }), { ownIds: ["100"] }, toUs("reply-to-us")],
  ["the metadata's reply_to is one of our messages", line("yes", { metadata: { reply_to: "100" } }), { ownIds: ["100"] }, toUs("reply-to-us")],
  ["a reply to someone else's message", line("yes", { signals: { replyTo: "99" }, metadata: { reply_to: "99" } }), { ownIds: ["100"] }, null],
  ["a reply when we have sent nothing", line("yes", { metadata: { reply_to: "100" } }), {}, null],
]);

const ANSWERS = verdict({ to: "us-engaged", reason: { rule: "answers-our-command" }, spendCommand: true });
const moo = line("a cow says moo");
table(rules.answersOurCommand, [
  ["the next line names nobody, 2 s after our `!sound`", moo, { command: { ts: T - 2 * S, target: null } }, ANSWERS],
  ["the next line opens with the command's target (`!sound | puff`)", line("puff: a cow says moo"), { command: { ts: T - 2 * S, target: "puff" }, members: ["puff"] }, ANSWERS],
  ["it opens with someone else", line("carol: later"), { command: { ts: T - 2 * S, target: "puff" }, members: ["puff", "carol"] }, null],
  ["it opens with a member, and the command was for the room", line("carol: later"), { command: { ts: T - 2 * S, target: null }, members: ["carol"] }, null],
  ["61 s after the command: past the answer window", moo, { command: { ts: T - 61 * S, target: null } }, null],
  ["no command of ours pending", moo, {}, null],
]);

const NOTHING = verdict({ to: "nobody", spendCommand: true });
table(rules.nothingInPlay, [
  ["nobody engaged, no recent target, no open line, no name variants", hello, {}, NOTHING],
  ["the sender's addressed line was 31 s ago: past continuationMs", hello, { targets: { bob: { to: "other", ts: T - 31 * S } } }, NOTHING],
  ["our open line was 61 s ago: past the answer window", hello, { openLine: { ts: T - 61 * S, spoken: [] } }, NOTHING],
  ["someone is engaged", hello, { engaged: [{ speaker: "carol", until: T + 600 * S }] }, null],
  ["the sender's addressed line was 10 s ago", hello, { targets: { bob: { to: "other", ts: T - 10 * S } } }, null],
  ["the line may answer our open line", hello, { openLine: { ts: T - 5 * S, spoken: [] } }, null],
  ["a name of ours has a variant (`jacob_` answers to `jacob:`)", hello, { keywords: ["jacob_"] }, null],
]);

const BOT = verdict({ to: "other", reason: { rule: "bot-command" }, spendCommand: true });
table(rules.botCommand, [
  ["`!info foo` asks the bot", line("!info foo"), {}, BOT],
  ["`!raid | bob` asks the bot, for bob", line("!raid | bob"), {}, BOT],
  ["no leading `!`", line("info foo"), {}, null],
]);

table(rules.namedUs, [
  [
    "`jacob: …` for `jacob_`: a marked address to a variant of our name",
    line("jacob: did it mount?"),
    { keywords: ["jacob_"] },
    verdict({ to: "us", reason: { rule: "named-us", name: "jacob" }, engage: "direct", target: "us", spendCommand: true }),
  ],
  ["a bare `jacob …` is too often the word", line("jacob is a common name"), { keywords: ["jacob_"] }, null],
  ["an address to another member", line("carol: did it mount?"), { keywords: ["jacob_"], members: ["carol"] }, null],
]);

const toOther = (name: string, key: string) =>
  verdict({ to: "other", reason: { rule: "addressed-other", name }, turnedTo: key, target: "other", spendCommand: true });
table(rules.addressedOther, [
  ["`carol: …` to a member seen speaking", line("carol: did you push it?"), { members: ["carol"] }, toOther("carol", "carol")],
  ["`@carol_ …`: the name as written, the nick key for the turn", line("@carol_ see above"), { members: ["carol"] }, toOther("carol_", "carol")],
  ["a bare `carol …` for a member seen speaking", line("carol did you push it?"), { members: ["carol"] }, toOther("carol", "carol")],
  ["`dave, …` for a listed member who has not spoken", line("dave, are you there?"), { listed: ["dave"] }, toOther("dave", "dave")],
  ["a bare `dave …` for a listed member only: just a word", line("dave are you there?"), { listed: ["dave"] }, null],
  ["`note: …` names nobody here", line("note: the build is red"), { members: ["carol"] }, null],
  ["a line that opens with no name", line("the build is red"), { members: ["carol"] }, null],
]);

const namedOther = (name: string, key: string) => verdict({ to: "other", reason: { rule: "named-other", name }, turnedTo: key, target: "other", spendCommand: true });
table(rules.namedOther, [
  ["`lol carol, try xkill`: a word, then a member seen speaking", line("lol carol, try xkill"), { members: ["carol"] }, namedOther("carol", "carol")],
  ["`thanks carol_`: the name as written, the nick key for the turn", line("thanks carol_"), { members: ["carol"] }, namedOther("carol_", "carol")],
  ["`ok dave: …` to a listed member, marked", line("ok dave: try it again"), { listed: ["dave"] }, namedOther("dave", "dave")],
  ["a bare `ok dave …` for a listed member only: just a word", line("ok dave will know"), { listed: ["dave"] }, null],
  ["the second word is no member's", line("lol that failed"), { members: ["carol"] }, null],
  ["the second word is our name: a mention's, not this rule's", line("thanks Alice"), { members: ["carol"] }, null],
  ["one word only", line("carol"), { members: ["carol"] }, null],
]);

table(rules.continuesAddressedOther, [
  ["10 s after the sender's line to another", hello, { targets: { bob: { to: "other", ts: T - 10 * S } } }, verdict({ to: "other", reason: { rule: "continues-addressed-other" }, target: "other", ...after })],
  ["31 s after: past continuationMs", hello, { targets: { bob: { to: "other", ts: T - 31 * S } } }, null],
  ["we spoke since their line: this one may answer us", hello, { targets: { bob: { to: "other", ts: T - 10 * S } }, lastSelfSpeakAt: T - 5 * S }, null],
  ["their previous line was to us", hello, { targets: { bob: { to: "us", ts: T - 10 * S } } }, null],
]);

const US = "alice.agentcp.io";
const maybeAnswer = { targets: { bob: { to: "maybe-us" as const, ts: T - 10 * S } } };
table(rules.privateExchange, [
  [
    "10 s after the sender's maybe-answer to our line; the last three lines bob's, ours, (bob's …)",
    hello,
    { ...maybeAnswer, recentSpeakers: ["bob", US, "bob"] },
    verdict({ to: "us-engaged", reason: { rule: "private-exchange" }, target: "us", ...after }),
  ],
  ["ours, bob's, ours", hello, { ...maybeAnswer, recentSpeakers: [US, "bob", US] }, verdict({ to: "us-engaged", reason: { rule: "private-exchange" }, target: "us", ...after })],
  ["carol spoke among the last three lines", hello, { ...maybeAnswer, recentSpeakers: ["carol", US, "bob"] }, null],
  ["only bob's lines: no turn of ours", hello, { ...maybeAnswer, recentSpeakers: ["bob", "bob", "bob"] }, null],
  // alice T-20 s `is there anything for the whitelist?`; bob T-15 s `restrict read`; bob T-10 s `okay`; bob T+0: bob talks on after our line.
  ["ours, bob's, bob's: no turn back to us yet", hello, { ...maybeAnswer, recentSpeakers: [US, "bob", "bob"] }, null],
  ["bob's, bob's, ours: a turn each way", hello, { ...maybeAnswer, recentSpeakers: ["bob", "bob", US] }, verdict({ to: "us-engaged", reason: { rule: "private-exchange" }, target: "us", ...after })],
  ["two lines are not an exchange yet", hello, { ...maybeAnswer, recentSpeakers: [US, "bob"] }, null],
  ["their previous line was not a maybe-answer to us", hello, { recentSpeakers: ["bob", US, "bob"] }, null],
  ["31 s after their maybe-answer: past continuationMs", hello, { targets: { bob: { to: "maybe-us", ts: T - 31 * S } }, recentSpeakers: ["bob", US, "bob"] }, null],
]);

const BACK_AND_FORTH = verdict({ to: "us-engaged", reason: { rule: "back-and-forth" }, target: "maybe-us", ...after });
/** bob T-10 s maybe answered our open line; we spoke at T-5 s; ours is the group's last line. */
const ourTurn = { ...maybeAnswer, lastSpeaker: US, lastSelfSpeakAt: T - 5 * S };
table(rules.backAndForth, [
  // alice T-20 s `has anyone tried 2.0?`; bob T-10 s `yes, it crashes`; carol T-8 s `works here`; alice T-5 s `which distro?`; bob T+0:
  ["our line since their maybe-answer was to the room, and it is the last line", line("debian 12"), { ...ourTurn, openLine: { ts: T - 5 * S, spoken: [] } }, BACK_AND_FORTH],
  ["our line since was to bob", line("debian 12"), { ...ourTurn, latestTo: ["bob"] }, BACK_AND_FORTH],
  ["our line since was to carol", line("debian 12"), { ...ourTurn, latestTo: ["carol"] }, null],
  ["carol spoke after our line", line("debian 12"), { ...ourTurn, openLine: { ts: T - 5 * S, spoken: ["carol"] }, lastSpeaker: "carol" }, null],
  ["the line opens with a marked address, even to a name we do not know", line("dave: debian 12"), { ...ourTurn, openLine: { ts: T - 5 * S, spoken: [] } }, null],
  ["`@dave …` too", line("@dave debian 12"), { ...ourTurn, openLine: { ts: T - 5 * S, spoken: [] } }, null],
  ["a word and a comma is no address (`yes, …`)", line("yes, debian 12"), { ...ourTurn, openLine: { ts: T - 5 * S, spoken: [] } }, BACK_AND_FORTH],
  ["31 s after their maybe-answer: past continuationMs", line("debian 12"), { ...ourTurn, targets: { bob: { to: "maybe-us", ts: T - 31 * S } }, openLine: { ts: T - 5 * S, spoken: [] } }, null],
  ["their previous line was to us: `continues`' line, not this rule's", line("debian 12"), { ...ourTurn, targets: { bob: { to: "us", ts: T - 10 * S } }, latestTo: ["bob"] }, null],
]);

table(rules.continuesAfterOurLine, [
  [
    "10 s after the sender's maybe-answer to our line",
    hello,
    { targets: { bob: { to: "maybe-us", ts: T - 10 * S } } },
    verdict({ to: "maybe-us", reason: { rule: "continues-after-our-line" }, target: "maybe-us", ...after }),
  ],
  ["31 s after: past continuationMs", hello, { targets: { bob: { to: "maybe-us", ts: T - 31 * S } } }, null],
  ["their previous line was to another member", hello, { targets: { bob: { to: "other", ts: T - 10 * S } } }, null],
]);

const AFTER_ANOTHER = verdict({ to: "maybe-us", reason: { rule: "after-another-speaker" }, engage: "follow-up", target: "maybe-us", ...after });
table(rules.afterAnotherSpeaker, [
  ["engaged with us, right after carol's line, 3 min after our last direct exchange", hello, { engaged: [{ ...bobEngaged, directAt: T - 180 * S }], lastSpeaker: "carol" }, AFTER_ANOTHER],
  ["engaged, never a direct exchange, right after carol's line", hello, { engaged: [bobEngaged], lastSpeaker: "carol" }, AFTER_ANOTHER],
  [
    "their previous line was to us, right after carol's line, 3 min after our last direct exchange",
    hello,
    { targets: { bob: { to: "us", ts: T - 10 * S } }, engaged: [{ ...bobEngaged, directAt: T - 180 * S }], lastSpeaker: "carol" },
    AFTER_ANOTHER,
  ],
  ["our last direct exchange was 60 s ago: still talking with us", hello, { engaged: [{ ...bobEngaged, directAt: T - 60 * S }], lastSpeaker: "carol" }, null],
  // bob T-25 s `Alice: is the hook run before commit?`; alice T-20 s `dave: try --force`; carol T-5 s `yes it is`; bob T+0:
  [
    "their line 25 s ago was to us, but our newest line went to dave and carol spoke since: maybe ours",
    line("oh ok, thanks"),
    { targets: { bob: { to: "us", ts: T - 25 * S } }, engaged: [{ ...bobEngaged, directAt: T - 25 * S }], lastSelfSpeakAt: T - 20 * S, latestTo: ["dave"], lastSpeaker: "carol" },
    AFTER_ANOTHER,
  ],
  // bob T-25 s `Alice: is the hook run before commit?`; carol T-5 s `yes it is`; bob T+0 (we have not spoken since our line at T-60 s to dave):
  [
    "their line 25 s ago was to us, we have not answered, carol spoke since: maybe ours",
    line("oh ok, thanks"),
    { targets: { bob: { to: "us", ts: T - 25 * S } }, engaged: [{ ...bobEngaged, directAt: T - 25 * S }], lastSelfSpeakAt: T - 60 * S, latestTo: ["dave"], lastSpeaker: "carol" },
    AFTER_ANOTHER,
  ],
  // bob T-25 s `Alice: is the hook run before commit?`; carol T-5 s `Alice, and on rebase?`; bob T+0:
  [
    "their line 25 s ago was to us, and carol's line since was to us too: carol was not talking to bob, not interrupted",
    line("I mean the pre-commit one"),
    { targets: { bob: { to: "us", ts: T - 25 * S } }, engaged: [{ ...bobEngaged, directAt: T - 25 * S }], lastSelfSpeakAt: T - 60 * S, latestTo: ["dave"], lastSpeaker: "carol", lastLineToUs: true },
    null,
  ],
  // alice T-30 s `bob: run the hook by hand`; bob T-20 s `how?`; carol T-5 s `lol`; bob T+0:
  [
    "their line was to us and our newest line was to them: carol's line between does not interrupt",
    line("found it, .git/hooks"),
    { targets: { bob: { to: "us", ts: T - 20 * S } }, engaged: [{ ...bobEngaged, directAt: T - 20 * S }], lastSelfSpeakAt: T - 30 * S, latestTo: ["bob"], lastSpeaker: "carol" },
    null,
  ],
  [
    "their line was to us, our newest line to them, the previous line the sender's own",
    line("found it, .git/hooks"),
    { targets: { bob: { to: "us", ts: T - 20 * S } }, engaged: [{ ...bobEngaged, directAt: T - 20 * S }], lastSelfSpeakAt: T - 60 * S, latestTo: ["dave"], lastSpeaker: "bob" },
    null,
  ],
  // alice T-180 s `bob: which kernel do you run?`; carol T-5 s `lol`; bob T+0, his first line since:
  [
    "engaged, right after carol's line, 3 min after our question to bob, which he has not answered yet: his answer",
    line("5.15"),
    { engaged: [{ ...bobEngaged, directAt: T - 180 * S }], lastSpeaker: "carol", awaiting: [{ sender: "bob", asked: true }] },
    null,
  ],
  [
    "our newest line was to bob (no question) and he has said nothing since: his answer",
    line("ok"),
    { engaged: [{ ...bobEngaged, directAt: T - 180 * S }], lastSpeaker: "carol", awaiting: [{ sender: "bob", asked: false }], latestTo: ["bob"] },
    null,
  ],
  [
    "we addressed bob without a question, then someone else: carol's line between turns him",
    line("ok"),
    { engaged: [{ ...bobEngaged, directAt: T - 180 * S }], lastSpeaker: "carol", awaiting: [{ sender: "bob", asked: false }], latestTo: ["dave"] },
    AFTER_ANOTHER,
  ],
  [
    "their line 25 s ago was to us, our newest line went to dave, but our question to bob is unanswered: not interrupted",
    line("5.15"),
    { targets: { bob: { to: "us", ts: T - 25 * S } }, engaged: [{ ...bobEngaged, directAt: T - 25 * S }], lastSelfSpeakAt: T - 20 * S, latestTo: ["dave"], lastSpeaker: "carol", awaiting: [{ sender: "bob", asked: true }] },
    null,
  ],
  ["the previous line was ours", hello, { engaged: [{ ...bobEngaged, directAt: T - 180 * S }], lastSpeaker: "alice.agentcp.io" }, null],
  ["the previous line was the sender's own", hello, { engaged: [{ ...bobEngaged, directAt: T - 180 * S }], lastSpeaker: "bob" }, null],
  ["a shared conversation is not theirs with us alone", hello, { engaged: [{ ...bobEngaged, directAt: T - 180 * S, shared: true }], lastSpeaker: "carol" }, null],
  ["not engaged, no line to us", hello, { lastSpeaker: "carol" }, null],
]);

const CONTINUES = verdict({ to: "us-engaged", reason: { rule: "continues" }, engage: "follow-up", target: "us", ...after });
table(rules.continues, [
  ["10 s after the sender's line to us (`err, the second half`)", line("err, the second half"), { targets: { bob: { to: "us", ts: T - 10 * S } } }, CONTINUES],
  ["31 s after: past continuationMs", hello, { targets: { bob: { to: "us", ts: T - 31 * S } } }, null],
  ["their previous line was to another member", hello, { targets: { bob: { to: "other", ts: T - 10 * S } } }, null],
]);

const ADDRESSED_BY_ANOTHER = verdict({ to: "maybe-us", reason: { rule: "addressed-by-another" }, engage: "follow-up", target: "maybe-us", ...after });
table(rules.addressedByAnother, [
  ["we addressed bob last, then carol did, and bob has not spoken since", hello, { engaged: [{ ...bobEngaged, contested: true }] }, ADDRESSED_BY_ANOTHER],
  ["bob engaged with us alone", hello, { engaged: [bobEngaged] }, null],
  ["a shared conversation is the shared rule's", hello, { engaged: [{ ...bobEngaged, shared: true }] }, null],
  ["the engagement ended", hello, { engaged: [{ speaker: "bob", until: T - S, contested: true }] }, null],
]);

table(rules.engaged, [
  ["the sender is engaged with us alone", hello, { engaged: [bobEngaged] }, verdict({ to: "us-engaged", reason: { rule: "engaged" }, engage: "follow-up", target: "us", ...after })],
  ["the engagement ended a second ago", hello, { engaged: [{ speaker: "bob", until: T - S }] }, null],
  ["another member joined the conversation", hello, { engaged: [{ ...bobEngaged, shared: true }] }, null],
  ["someone else addressed bob after us", hello, { engaged: [{ ...bobEngaged, contested: true }] }, null],
  ["someone else is engaged, not the sender", hello, { engaged: [{ speaker: "carol", until: T + 600 * S }] }, null],
]);

table(rules.sharedConversation, [
  ["another member joined the sender's conversation with us", hello, { engaged: [{ ...bobEngaged, shared: true }] }, verdict({ to: "maybe-us", reason: { rule: "shared-conversation" }, ...after })],
  ["the sender is engaged with us alone", hello, { engaged: [bobEngaged] }, null],
]);

const SECOND_PERSON = verdict({ to: "us-engaged", reason: { rule: "second-person" }, target: "maybe-us", ...after });
/** alice T-5 s `GET what?` (to the room); bob T+0, the first line since. */
const rightAfterOurs = { openLine: { ts: T - 5 * S, spoken: [] }, lastSpeaker: US, lastSelfSpeakAt: T - 5 * S };
table(rules.secondPerson, [
  ["`why would you need that?` right after our line to the room", line("why would you need that?"), rightAfterOurs, SECOND_PERSON],
  ["`can u paste it`", line("can u paste it"), rightAfterOurs, SECOND_PERSON],
  ["`kannst du das pasten?`", line("kannst du das pasten?"), rightAfterOurs, SECOND_PERSON],
  ["`你试过重启吗`", line("你试过重启吗"), rightAfterOurs, SECOND_PERSON],
  ["no second person", line("that is the command"), rightAfterOurs, null],
  ["`you` inside a word is not it (`youth`, `bayou`)", line("youth and bayou"), rightAfterOurs, null],
  ["carol spoke after our line: not right after it", line("why would you need that?"), { ...rightAfterOurs, openLine: { ts: T - 5 * S, spoken: ["carol"] }, lastSpeaker: "carol" }, null],
  ["no open line of ours (our line was to someone)", line("why would you need that?"), { lastSpeaker: US, lastSelfSpeakAt: T - 5 * S }, null],
]);

const AFTER_OUR_LINE = verdict({ to: "maybe-us", reason: { rule: "after-our-line" }, target: "maybe-us", ...after });
table(rules.afterOurLine, [
  ["the first speaker 5 s after our line", hello, { openLine: { ts: T - 5 * S, spoken: [] } }, AFTER_OUR_LINE],
  ["the second speaker", hello, { openLine: { ts: T - 5 * S, spoken: ["carol"] } }, AFTER_OUR_LINE],
  ["the third speaker", hello, { openLine: { ts: T - 5 * S, spoken: ["carol", "dave"] } }, null],
  ["the sender's second line since ours", hello, { openLine: { ts: T - 5 * S, spoken: ["bob"] } }, null],
  ["61 s after our line", hello, { openLine: { ts: T - 61 * S, spoken: [] } }, null],
  ["no open line of ours", hello, {}, null],
]);

table(rules.plain, [
  ["whatever the line: plain talk, sharing any engaged speaker it names", line("lol bob, try xkill", { sender: "carol" }), { engaged: [bobEngaged] }, verdict({ to: "nobody", ...after })],
]);

describe("the table", () => {
  it("asks the rules in the order docs/behaviour.md's addressing table lists them", () => {
    const page = readFileSync(fileURLToPath(new URL("../../../docs/behaviour.md", import.meta.url)), "utf8");
    const section = page.slice(page.indexOf("### Addressing reasons"), page.indexOf("### Gate waits"));
    const documented = section.split("\n").flatMap((l) => /^\| `([a-z-]+)` \|/.exec(l)?.slice(1) ?? []);
    expect(documented.length).toBeGreaterThan(0);
    expect(rules.ADDRESSING_RULES.map((r) => r.name)).toEqual(documented);
  });

  const rows: ReadonlyArray<readonly [string, Line, ViewSpec, Verdict]> = [
    ["a reaction naming us rides along", line("Alice 👍", { signals: { reaction: { reaction: "👍" } } }), {}, PLAIN],
    ["an engaged speaker's mention is a mention", line("Alice, and now?"), { engaged: [bobEngaged] }, toUs("mention")],
    ["an engaged speaker's line to another member is theirs", line("carol: and now?"), { engaged: [bobEngaged], members: ["carol"] }, toOther("carol", "carol")],
    ["a bot command in a quiet room is plain: nothing is in play", line("!info foo"), {}, NOTHING],
    ["a bot command from an engaged speaker asks the bot", line("!info foo"), { engaged: [bobEngaged] }, BOT],
    ["a line no rule claims", hello, { engaged: [{ speaker: "carol", until: T + 600 * S }] }, verdict({ to: "nobody", ...after })],
  ];
  it.each(rows)("the first verdict wins: %s", (_what, l, view, expected) => {
    expect(rules.decideAddressing(l.line, l.signals, viewOf(view))).toEqual(expected);
  });
});
