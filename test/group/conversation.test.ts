// The conversation tracker on its own: lines in, verdicts out, and what each verdict leaves
// behind for the next line (the update step). A real traffic record (vitality window, own
// messages) stands where the ingest would; timelines are written as T+ offsets.
import { describe, expect, it } from "vitest";
import { addressingLabel } from "../../src/group/addressing/reason.ts";
import { ConversationTracker, type TrafficRecord } from "../../src/group/conversation.ts";
import { compileMentionMatcher } from "../../src/group/mention.ts";
import { readMessageSignals } from "../../src/group/signals.ts";
import { OwnMessages } from "../../src/group/social.ts";
import { appendVitalityEvent, createVitalityWindow } from "../../src/group/vitality.ts";
import type { GroupMessage } from "../../src/types.ts";

const T = 1_700_000_000_000;
const S = 1000;
const AID = "alice.agentcp.io";

function tracker() {
  const own = new OwnMessages();
  const traffic: TrafficRecord & { lastSelfSpeakAt: number | null } = {
    lastSelfSpeakAt: null,
    window: createVitalityWindow({ windowMs: 300 * S, maxEvents: 200 }),
    own,
  };
  const keywords = ["Alice", AID];
  const t = new ConversationTracker({
    aid: AID,
    keywords,
    matcher: compileMentionMatcher(keywords, "smart"),
    settings: { engagedWindowMs: 900 * S, continuationMs: 30 * S },
    serviceAid: "group.agentcp.io",
    traffic,
  });
  let id = 0;
  return {
    t,
    /** A member's line at T+ms: its printed reason and whom it is for. */
    line(ms: number, sender: string, content: string, metadata: Record<string, unknown> | null = null) {
      const m: GroupMessage = { msgId: String(++id), groupId: "g1", sender, content, contentType: "text", timestamp: T + ms, metadata };
      appendVitalityEvent(traffic.window, m.timestamp, sender);
      const signals = readMessageSignals(metadata, AID, content);
      const v = t.observe(m, signals, signals.reaction ? "reaction" : undefined);
      return [addressingLabel(v.reason), v.to] as const;
    },
    /** Our own line at T+ms, as the ingest counts it. */
    ours(ms: number, content: string, repliedTo?: string) {
      const msgId = `own-${++id}`;
      own.recordSent(msgId, content);
      traffic.lastSelfSpeakAt = T + ms;
      appendVitalityEvent(traffic.window, T + ms, AID);
      t.ownLine(T + ms, content, repliedTo);
      return msgId;
    },
  };
}

describe("conversation tracker: each verdict's effects on the next lines", () => {
  it("a mention engages its sender: their next lines continue it, then follow up as engaged", () => {
    const c = tracker();
    expect(c.line(0, "bob", "Alice, is the build green?")).toEqual(["mention", "us"]);
    expect(c.t.engagedSpeakersAt(T + S)).toEqual(["bob"]);
    expect(c.line(10 * S, "bob", "the red one")).toEqual(["continues", "us-engaged"]);
    expect(c.line(50 * S, "bob", "any news?")).toEqual(["engaged", "us-engaged"]);
    expect(c.line(51 * S, "carol", "any news?")).toEqual([null, "nobody"]);
  });

  it("an engaged speaker who turns to a member leaves the conversation; the member's own conversation becomes shared", () => {
    const c = tracker();
    c.line(0, "bob", "Alice, hi");
    c.line(1 * S, "carol", "Alice, me too");
    expect(c.line(40 * S, "bob", "carol: did you push?")).toEqual(["addressed-other:carol", "other"]);
    expect(c.t.engagedSpeakersAt(T + 41 * S)).toEqual(["carol"]);
    // carol was addressed by someone else: maybe ours from here, not [engaged].
    expect(c.line(45 * S, "carol", "yes, an hour ago")).toEqual(["shared-conversation", "maybe-us"]);
    // bob's next line within 30 s continues his line to carol.
    expect(c.line(50 * S, "bob", "thanks")).toEqual(["continues-addressed-other", "other"]);
  });

  it("a line naming an engaged speaker anywhere shares their conversation", () => {
    const c = tracker();
    c.line(0, "bob", "Alice, xkill does not start");
    c.line(1 * S, "carol", "hmm");
    expect(c.line(40 * S, "dave", "lol bob, try xkill -a")).toEqual(["named-other:bob", "other"]);
    expect(c.line(50 * S, "bob", "that worked")).toEqual(["shared-conversation", "maybe-us"]);
  });

  it("our open line: the first two speakers may answer it, the rest of an answer too, the third speaker does not", () => {
    const c = tracker();
    c.line(0, "dave", "morning");
    c.ours(1 * S, "has anyone tried the 2.0 build?");
    expect(c.line(4 * S, "carol", "yes, works here")).toEqual(["after-our-line", "maybe-us"]);
    expect(c.line(5 * S, "dave", "not yet")).toEqual(["after-our-line", "maybe-us"]);
    expect(c.line(6 * S, "erin", "what build?")).toEqual([null, "nobody"]);
    expect(c.line(7 * S, "carol", "but the docs are stale")).toEqual(["continues-after-our-line", "maybe-us"]);
  });

  it("a reaction counts as having spoken since our line, but never as the last speaker", () => {
    const c = tracker();
    c.ours(0, "who runs the 2.0 build?");
    const reaction = { group_meta: { msg_type: "reaction", reaction: "👍" } };
    expect(c.line(1 * S, "carol", "👍", reaction)).toEqual([null, "nobody"]);
    expect(c.line(2 * S, "dave", "👍", reaction)).toEqual([null, "nobody"]);
    // Two speakers have spoken since our line: a third's first line no longer may answer it.
    expect(c.line(3 * S, "erin", "I do")).toEqual([null, "nobody"]);
  });

  it("our bot command waits through a mention of us; the group's next line answers it, the one after does not", () => {
    const c = tracker();
    c.line(0, "bob", "hi");
    c.ours(1 * S, "!sound | puff");
    expect(c.line(2 * S, "bob", "Alice, what was that?")).toEqual(["mention", "us"]);
    expect(c.line(3 * S, "puff", "puff: a cow says moo")).toEqual(["answers-our-command", "us-engaged"]);
    // Spent: the bot's next line is its own. (bob is engaged, puff is not: plain talk.)
    expect(c.line(4 * S, "puff", "and a cat says meow")).toEqual([null, "nobody"]);
  });

  it("a line that does not answer our command still spends it", () => {
    const c = tracker();
    c.line(0, "bob", "hi");
    c.ours(1 * S, "!sound");
    expect(c.line(2 * S, "carol", "bob: lunch?")).toEqual(["addressed-other:bob", "other"]);
    // The bot's answer comes a line late: not an answer to the command any more, only a first
    // line after our line to the room (the command named nobody).
    expect(c.line(3 * S, "puff", "a cow says moo")).toEqual(["after-our-line", "maybe-us"]);
  });

  it("our line naming nobody right after a mention answers it: the asker is engaged again", () => {
    const c = tracker();
    c.line(0, "carol", "hi");
    c.line(1 * S, "bob", "Alice, is 2.0 out?");
    expect(c.line(2 * S, "bob", "carol: you know?")).toEqual(["addressed-other:carol", "other"]);
    expect(c.t.engagedSpeakersAt(T + 3 * S)).toEqual([]);
    c.ours(20 * S, "yes, since Monday");
    expect(c.t.engagedSpeakersAt(T + 21 * S)).toEqual(["bob"]);
  });

  it("a continuation to us after another member's line: ours while our newest line was to the sender, maybe ours when it was not", () => {
    const c = tracker();
    c.line(0, "dave", "Alice, which branch?");
    c.ours(5 * S, "dave: main");
    // bob asks us; carol speaks before we answer; bob's next line may as well be to carol.
    expect(c.line(10 * S, "bob", "Alice, is the hook run before commit?")).toEqual(["mention", "us"]);
    expect(c.line(20 * S, "carol", "yes it is")).toEqual([null, "nobody"]);
    expect(c.line(25 * S, "bob", "oh ok, thanks")).toEqual(["after-another-speaker", "maybe-us"]);
    // We answer bob; he asks on; carol's line between does not take his continuation from us.
    c.ours(40 * S, "bob: yes, run it by hand with git hook run");
    expect(c.line(45 * S, "bob", "Alice, where does it live?")).toEqual(["mention", "us"]);
    expect(c.line(50 * S, "carol", "lol")).toEqual([null, "nobody"]);
    expect(c.line(55 * S, "bob", "found it, .git/hooks")).toEqual(["continues", "us-engaged"]);
  });

  it("a continuation to us after another member's line to us: that member was not talking to the sender, so it stays ours", () => {
    const c = tracker();
    c.line(0, "dave", "Alice, which branch?");
    c.ours(5 * S, "dave: main");
    expect(c.line(10 * S, "bob", "Alice, is the hook run before commit?")).toEqual(["mention", "us"]);
    // carol asks us too before we answer: her line is to us, not to bob.
    expect(c.line(20 * S, "carol", "Alice, and on rebase?")).toEqual(["mention", "us"]);
    expect(c.line(25 * S, "bob", "I mean the pre-commit one")).toEqual(["continues", "us-engaged"]);
    // A line between that is not to us (erin's, to nobody in particular) leaves bob's next line maybe ours.
    expect(c.line(30 * S, "erin", "it is late")).toEqual([null, "nobody"]);
    expect(c.line(35 * S, "bob", "oh ok, thanks")).toEqual(["after-another-speaker", "maybe-us"]);
  });

  it("a word and then a member's name turns to them (`lol carol, …`): the sender's conversation with us ends", () => {
    const c = tracker();
    c.line(0, "carol", "xkill is the answer");
    expect(c.line(5 * S, "bob", "Alice, xkill does not start")).toEqual(["mention", "us"]);
    expect(c.line(15 * S, "bob", "lol carol, you were right")).toEqual(["named-other:carol", "other"]);
    expect(c.t.engagedSpeakersAt(T + 16 * S)).toEqual([]);
    // Within continuationMs his next line continues the line to carol.
    expect(c.line(25 * S, "bob", "it needs -a")).toEqual(["continues-addressed-other", "other"]);
  });

  it("a line that names us but opens by addressing another member talks about us to them: maybe ours", () => {
    const c = tracker();
    c.line(0, "carol", "how do I run the hook?");
    expect(c.line(5 * S, "bob", "carol: ask Alice, she wrote it")).toEqual(["mention-to-other:carol", "maybe-us"]);
    expect(c.t.engagedSpeakersAt(T + 6 * S)).toEqual([]);
    expect(c.line(10 * S, "bob", "or read the docs")).toEqual(["continues-addressed-other", "other"]);
    // Naming us as the second addressee of the opening (`carol, Alice: …`) is a mention.
    expect(c.line(60 * S, "bob", "carol, Alice: did it work?")).toEqual(["mention", "us"]);
  });

  it("back and forth: a maybe-answer to our line, our line to the room, and their line right after ours is ours", () => {
    const c = tracker();
    c.line(0, "dave", "morning");
    c.ours(1 * S, "has anyone tried the 2.0 build?");
    expect(c.line(4 * S, "bob", "yes, it crashes on start")).toEqual(["after-our-line", "maybe-us"]);
    expect(c.line(6 * S, "carol", "works here")).toEqual(["after-our-line", "maybe-us"]);
    c.ours(10 * S, "which distro?");
    expect(c.line(14 * S, "bob", "debian 12")).toEqual(["back-and-forth", "us-engaged"]);
    // It opens no conversation: bob is not engaged, his next line is maybe ours again.
    expect(c.t.engagedSpeakersAt(T + 15 * S)).toEqual([]);
    expect(c.line(40 * S, "bob", "and 11")).toEqual(["continues-after-our-line", "maybe-us"]);
    // carol speaks after our next line: bob's line is no longer his turn with us.
    c.ours(50 * S, "try 2.0.1");
    expect(c.line(52 * S, "carol", "2.0.1 works")).toEqual(["after-our-line", "maybe-us"]);
    expect(c.line(55 * S, "bob", "ok")).toEqual(["continues-after-our-line", "maybe-us"]);
  });

  it("someone we asked answers us with their next line, whoever spoke between and however long it took", () => {
    const c = tracker();
    c.line(0, "carol", "hi");
    expect(c.line(1 * S, "bob", "Alice, my wifi drops")).toEqual(["mention", "us"]);
    c.ours(5 * S, "bob: which kernel do you run?");
    expect(c.line(60 * S, "carol", "mine too, since the update")).toEqual([null, "nobody"]);
    c.ours(70 * S, "carol: same card?");
    expect(c.line(100 * S, "carol", "yes")).toEqual(["engaged", "us-engaged"]);
    // T+185 s, bob's first line since our question, 3 min after it, right after carol's:
    // it answers our question (was after-another-speaker: maybe ours).
    expect(c.line(185 * S, "bob", "5.15")).toEqual(["engaged", "us-engaged"]);
    // Answered: his next line after someone else's, long after our question, is maybe ours again.
    expect(c.line(320 * S, "dave", "hi all")).toEqual([null, "nobody"]);
    expect(c.line(330 * S, "bob", "anyone else?")).toEqual(["after-another-speaker", "maybe-us"]);
  });

  it("a private exchange needs a turn each way: our line, then the sender talking on, is not one", () => {
    const c = tracker();
    c.line(0, "dave", "morning");
    c.ours(1 * S, "is there anything special for the read whitelist?");
    expect(c.line(10 * S, "bob", "restricting the read permission")).toEqual(["after-our-line", "maybe-us"]);
    expect(c.line(20 * S, "bob", "okay")).toEqual(["continues-after-our-line", "maybe-us"]);
    // ours, bob's, bob's: bob talks on; no line of his has had our answer yet.
    expect(c.line(30 * S, "bob", "right")).toEqual(["continues-after-our-line", "maybe-us"]);
    c.ours(35 * S, "and the group?");
    // bob's, bob's, ours — then bob: a turn each way.
    expect(c.line(40 * S, "bob", "users")).toEqual(["private-exchange", "us-engaged"]);
  });

  it("a line in the second person right after our line to the room answers it", () => {
    const c = tracker();
    c.line(0, "dave", "morning");
    c.ours(1 * S, "anyone know why GET hangs?");
    expect(c.line(7 * S, "bob", "you need HOST too if you speak HTTP/1.1")).toEqual(["second-person", "us-engaged"]);
    // It opens no conversation: bob is not engaged.
    expect(c.t.engagedSpeakersAt(T + 8 * S)).toEqual([]);
    c.ours(20 * S, "what is the best ftp client?");
    expect(c.line(25 * S, "carol", "gftp")).toEqual(["after-our-line", "maybe-us"]);
    // Not right after our line any more: maybe ours, as before.
    expect(c.line(30 * S, "dave", "did you try lftp?")).toEqual(["after-our-line", "maybe-us"]);
  });

  it("a reply to one of our messages is to us", () => {
    const c = tracker();
    const ours = c.ours(0, "try the 2.0 build");
    expect(c.line(5 * S, "bob", "done", { reply_to: ours })).toEqual(["reply-to-us", "us"]);
  });
});
