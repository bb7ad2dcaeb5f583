// Lines that may answer us without naming us, and the pace of follow-ups: the rules that carry
// addressed talk across channel styles (a question to the room, a meeting chair, a fast exchange).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { followUpPaceMs } from "../../src/group/dispatch-gate.ts";
import { addressingLabel } from "../../src/group/addressing/reason.ts";
import type { InboundMessage } from "../../src/types.ts";
import { T0, at, msg, setup } from "./harness.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const BOB = "bob.agentcp.io";
const CAROL = "carol.agentcp.io";
const DAVE = "dave.agentcp.io";
const ERIN = "erin.agentcp.io";

/** Our own line in a {@link play} script. */
const WE = "we";
/**
 * Plays a timeline literally: at T+ms, a member's line (`[ms, sender, id, text]`) or ours
 * (`[ms, WE, msgId, text]`), in order.
 */
async function play(t: ReturnType<typeof setup>, steps: ReadonlyArray<readonly [number, string, string, string]>): Promise<void> {
  for (const [ms, who, id, text] of steps) {
    await at(ms);
    if (who === WE) t.client.recordOwnMessage({ msgId: id, timestamp: T0 + ms, content: text });
    else t.client.feedBufferGate([msg(id, ms, text, who)]);
  }
}

function accepted(t: ReturnType<typeof setup>): Array<[string, boolean, boolean, boolean, string | null]> {
  return t.events.flatMap((e) => {
    if (e.type !== "accepted") return [];
    const m: InboundMessage = e.message;
    return [[m.msgId, m.isMention, m.engaged, m.maybeOurs === true, addressingLabel(m.addressing)]];
  });
}

describe("a line after ours that names nobody may answer it", () => {
  it("the next two speakers' first lines within 60 s go to the model as maybe ours; a third speaker's, or a later line, do not", async () => {
    const t = setup();
    // T+0s    dave: "morning"                           plain
    // T+1s    we:   "has anyone tried the 2.0 build?"   names nobody
    // T+4s    carol: "yes, works here"                  maybe ours (1st speaker after us)
    // T+5s    dave: "not yet"                           maybe ours (2nd speaker)
    // T+6s    erin: "what build?"                       plain (3rd speaker)
    // T+7s    carol: "but the docs are stale"           maybe ours (the rest of carol's answer)
    // T+9s    5 s after the first maybe-ours line → one dispatch of the 4 lines held, on the
    //         addressed path ("engaged"), not after the cooldown of the T+3s dispatch
    // T+80s   bob:  "anyone around?"                    plain (79 s after our line)
    t.client.feedBufferGate([msg(1, 0, "morning", DAVE)]);
    await at(1000);
    t.client.recordOwnMessage({ msgId: "100", timestamp: T0 + 1000, content: "has anyone tried the 2.0 build?" });
    await at(4000);
    t.client.feedBufferGate([msg(2, 4000, "yes, works here", CAROL)]);
    await at(5000);
    t.client.feedBufferGate([msg(3, 5000, "not yet", DAVE)]);
    await at(6000);
    t.client.feedBufferGate([msg(4, 6000, "what build?", ERIN)]);
    await at(7000);
    t.client.feedBufferGate([msg(5, 7000, "but the docs are stale", CAROL)]);
    await at(80_000);
    t.client.feedBufferGate([msg(6, 80_000, "anyone around?", BOB)]);
    await at(200_000);
    expect(accepted(t)).toEqual([
      ["1", false, false, false, null],
      ["2", false, false, true, "after-our-line"],
      ["3", false, false, true, "after-our-line"],
      ["4", false, false, false, null],
      ["5", false, false, true, "continues-after-our-line"],
      ["6", false, false, false, null],
    ]);
    expect(t.calls.map((c) => [c.at, c.batch.mentionInfo.triggerType, c.ids])).toEqual([
      [3000, "normal", ["1"]],
      [9000, "engaged", ["2", "3", "4", "5"]],
      [83_000, "normal", ["6"]],
    ]);
  });

  it("after our line to one member, the others' lines are not answers to it", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "it fails to mount", BOB)]);
    await at(1000);
    t.client.recordOwnMessage({ msgId: "100", timestamp: T0 + 1000, content: "try sudo mount -a, bob" });
    await at(4000);
    t.client.feedBufferGate([msg(2, 4000, "lunch anyone?", CAROL)]);
    await at(60_000);
    expect(accepted(t)).toEqual([
      ["1", false, false, false, null],
      ["2", false, false, false, null],
    ]);
  });

  it("our line ends a sender's continuation to another member: their next line may answer us", async () => {
    const t = setup();
    // T+0s   bob: "alice, is the build fixed?"  mention
    // T+33s  bob: "carol: did you push it?"     addressed to carol (bob's conversation with us ends)
    // T+36s  we:  "the build is green again"    names nobody, 36 s after bob's mention (> continuationMs)
    // T+40s  bob: "nice"                         was continues-addressed-other (within 30 s of bob's line to carol)
    t.client.feedBufferGate([msg(0, 0, "hi", CAROL)]);
    t.client.feedBufferGate([msg("0b", 0, "alice, is the build fixed?", BOB)]);
    await at(33_000);
    t.client.feedBufferGate([msg(1, 33_000, "carol: did you push it?", BOB)]);
    await at(36_000);
    t.client.recordOwnMessage({ msgId: "100", timestamp: T0 + 36_000, content: "the build is green again" });
    await at(40_000);
    t.client.feedBufferGate([msg(2, 40_000, "nice", BOB)]);
    await at(100_000);
    expect(accepted(t).slice(2)).toEqual([
      ["1", false, false, false, "addressed-other:carol"],
      ["2", false, false, true, "after-our-line"],
    ]);
  });
});

describe("an answer to our line that goes on line after line", () => {
  it("continues while each line follows the sender's previous one within continuationMs, not only their first", async () => {
    const t = setup();
    await play(t, [
      [0, WE, "100", "is there anything special for the read whitelist?"], // names nobody
      [10_000, BOB, "1", "restricting the read permission"], // after-our-line
      [25_000, BOB, "2", "okay"], // continues-after-our-line
      [38_000, BOB, "3", "right"], // ours and bob's lines alone, but no turn back to us yet: continues-after-our-line
      [46_000, BOB, "4", "can you paste your line?"], // 8 s after bob's previous line: continues it (was plain: 36 s after his first)
    ]);
    await at(120_000);
    expect(accepted(t)).toEqual([
      ["1", false, false, true, "after-our-line"],
      ["2", false, false, true, "continues-after-our-line"],
      ["3", false, false, true, "continues-after-our-line"],
      ["4", false, false, true, "continues-after-our-line"],
    ]);
  });
});

describe("a private exchange: the group's last three lines are ours and the sender's alone", () => {
  it("another speaker among the last three lines: no private exchange, the answer stays maybe ours", async () => {
    const t = setup();
    await play(t, [
      [0, WE, "100", "is there anything special for the read whitelist?"], // names nobody
      [10_000, BOB, "1", "restricting the read permission"], // after-our-line
      [15_000, CAROL, "c1", "anyone seen the new release notes"], // carol, on her own
      [20_000, BOB, "2", "okay"], // last three: ours, bob's, carol's → continues-after-our-line
      [25_000, BOB, "3", "right"], // last three: bob's, carol's, bob's → continues-after-our-line
    ]);
    await at(120_000);
    expect(accepted(t).filter(([id]) => id !== "c1")).toEqual([
      ["1", false, false, true, "after-our-line"],
      ["2", false, false, true, "continues-after-our-line"],
      ["3", false, false, true, "continues-after-our-line"],
    ]);
  });
});

describe("our line that names nobody, right after a mention, answers it", () => {
  it("the one who mentioned us is engaged again, even after turning to someone else", async () => {
    const t = setup();
    await play(t, [
      [0, CAROL, "0", "hi"],
      [0, BOB, "0b", "alice, is the build fixed?"], // mention
      [2000, BOB, "1", "carol: did you push it?"], // addressed to carol (bob's conversation with us ends)
      [5000, WE, "100", "the build is green again"], // names nobody, 5 s after bob's mention: answers it
      [10_000, BOB, "2", "nice"], // engaged (was after-our-line: maybe ours)
    ]);
    await at(60_000);
    expect(accepted(t).slice(2)).toEqual([
      ["1", false, false, false, "addressed-other:carol"],
      ["2", false, true, false, "engaged"],
    ]);
  });

  it("so their lines after the next two speakers' are still ours (a busy support channel)", async () => {
    const t = setup();
    await play(t, [
      [0, CAROL, "0", "hi"],
      [0, BOB, "1", "alice: GET"], // mention
      [13_000, BOB, "2", "carol: can you ping the nameserver?"], // addressed to carol
      [19_000, WE, "100", "GET what?"], // names nobody, 19 s after bob's mention
      [31_000, DAVE, "3", "thats the command"], // after-our-line (1st speaker)
      [37_000, CAROL, "4", "yes no probs there"], // after-our-line (2nd speaker)
      [43_000, BOB, "5", "GET $path HTTP/1.1"], // engaged (the third speaker: was plain)
    ]);
    await at(120_000);
    expect(accepted(t).slice(1)).toEqual([
      ["1", true, false, false, "mention"],
      ["2", false, false, false, "addressed-other:carol"],
      ["3", false, false, true, "after-our-line"],
      ["4", false, false, true, "after-our-line"],
      ["5", false, true, false, "engaged"],
    ]);
  });

  it("not when our line comes later than continuationMs after the mention, or names someone", async () => {
    const t = setup();
    await play(t, [
      [0, CAROL, "0", "hi"],
      [0, BOB, "1", "alice: GET"], // mention
      [2000, BOB, "2", "carol: ping it"], // addressed to carol
      [31_000, WE, "100", "GET what?"], // 31 s after the mention (> 30 s): answers nothing in particular
      [32_000, DAVE, "3", "hm"], // the next two speakers: after-our-line
      [33_000, ERIN, "4", "ok"],
      [34_000, BOB, "5", "GET $path"], // plain: bob is not engaged again
      [40_000, BOB, "6", "alice: and HEAD?"], // mention
      [41_000, BOB, "7", "carol: HEAD?"], // addressed to carol (ends bob's conversation)
      [42_000, WE, "101", "dave: use wget"], // names dave: answers dave, not bob
      [50_000, CAROL, "8", "hi"], // plain
      [52_000, BOB, "9", "HEAD works"], // plain: not engaged again by our T+42s line
    ]);
    await at(120_000);
    expect(accepted(t).slice(1)).toEqual([
      ["1", true, false, false, "mention"],
      ["2", false, false, false, "addressed-other:carol"],
      ["3", false, false, true, "after-our-line"],
      ["4", false, false, true, "after-our-line"],
      ["5", false, false, false, null],
      ["6", true, false, false, "mention"],
      ["7", false, false, false, "addressed-other:carol"],
      ["8", false, false, false, null],
      ["9", false, false, false, null],
    ]);
  });
});

describe("naming an engaged speaker anywhere in a line", () => {
  it("shares their conversation: their next line is maybe ours, not [engaged]", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "alice, how do I mount it?", BOB)]);
    await at(3000);
    t.client.feedBufferGate([msg(2, 3000, "hi", DAVE)]);
    await at(40_000);
    // Not an opening address: carol names bob at the end of her line.
    t.client.feedBufferGate([msg(3, 40_000, "try xkill for that, bob", CAROL)]);
    await at(80_000);
    t.client.feedBufferGate([msg(4, 80_000, "it says permission denied", BOB)]);
    await at(90_000);
    expect(accepted(t).at(-1)).toEqual(["4", false, false, true, "shared-conversation"]);
  });
});

describe("follow-ups keep a reserve of the addressed allowance for mentions", () => {
  it("followUpPaceMs: free below the allowance minus a fifth; then until the oldest needed start leaves the window", () => {
    const W = 300_000;
    expect(followUpPaceMs({ now: 50_000, recentStarts: [0, 10_000, 20_000], allowance: 5, windowMs: W })).toBe(0);
    // 4 of 5 used (a reserve of 1 kept): the next follow-up waits until T+0's start leaves the window.
    expect(followUpPaceMs({ now: 50_000, recentStarts: [0, 10_000, 20_000, 30_000], allowance: 5, windowMs: W })).toBe(W - 50_000 + 1);
    // Allowance 30 keeps 6: 24 starts in the window are the limit.
    const starts = Array.from({ length: 24 }, (_, i) => i * 1000);
    expect(followUpPaceMs({ now: 30_000, recentStarts: starts.slice(0, 23), allowance: 30, windowMs: W })).toBe(0);
    expect(followUpPaceMs({ now: 30_000, recentStarts: starts, allowance: 30, windowMs: W })).toBe(W - 30_000 + 1);
    // Starts that left the window do not count.
    expect(followUpPaceMs({ now: W + 1, recentStarts: [0, 1, 2, 3], allowance: 5, windowMs: W })).toBe(0);
    expect(followUpPaceMs({ now: 0, recentStarts: [], allowance: 0, windowMs: W })).toBe(0);
  });

  it("a fast exchange batches once 4 of 5 are spent; a mention still goes at once and takes the waiting lines", async () => {
    const budget = {
      enabled: true,
      addressed: { "5m": { messages: 5, tokens: 1_000_000 }, "3h": { messages: 100, tokens: 10_000_000 }, "24h": { messages: 100, tokens: 10_000_000 } },
      unaddressed: { "5m": { messages: 2, tokens: 1_000_000 }, "3h": { messages: 12, tokens: 10_000_000 }, "24h": { messages: 48, tokens: 10_000_000 } },
      unaddressedEvery: 40,
      orphan: { "5m": { messages: 2, tokens: 1_000_000 }, "3h": { messages: 12, tokens: 10_000_000 }, "24h": { messages: 48, tokens: 10_000_000 } },
    };
    const t = setup({ settings: { budget } });
    // T+0s    bob mentions us                → mention dispatch at T+0 (1 of 5)
    // T+10s, T+20s, T+30s  bob follows up    → engaged dispatches at T+15s, T+25s, T+35s (4 of 5)
    // T+40s, T+50s  bob follows up           → wait: T+0's start leaves the window at T+300s
    // T+100s  carol mentions us              → mention dispatch at T+100s with bob's two lines
    // T+110s  bob follows up                 → 5 starts in the window: waits until T+15s's start
    //                                          leaves it, T+315.001s
    t.client.feedBufferGate([msg(1, 0, "alice, the build is red", BOB)]);
    for (const [id, s] of [[2, 10], [3, 20], [4, 30], [5, 40], [6, 50]] as const) {
      await at(s * 1000);
      t.client.feedBufferGate([msg(id, s * 1000, `detail ${id}`, BOB)]);
    }
    await at(100_000);
    t.client.feedBufferGate([msg(7, 100_000, "alice, is it the tests?", CAROL)]);
    await at(110_000);
    t.client.feedBufferGate([msg(8, 110_000, "detail 8", BOB)]);
    await at(400_000);
    expect(t.calls.map((c) => [c.at, c.batch.mentionInfo.triggerType, c.ids])).toEqual([
      [0, "mention", ["1"]],
      [15_000, "engaged", ["2"]],
      [25_000, "engaged", ["3"]],
      [35_000, "engaged", ["4"]],
      [100_000, "mention", ["5", "6", "7"]],
      [315_001, "engaged", ["8"]],
    ]);
  });
});

describe("the rest of an answer to our line", () => {
  it("a second line from the same speaker within continuationMs is maybe ours too; a line after that is not", async () => {
    const t = setup();
    // T+0s   dave: "morning"
    // T+1s   we:   "is the mirror back up?"
    // T+10s  carol: "yes since noon"           after-our-line
    // T+25s  carol: "but it is slow"          continues-after-our-line (15 s after her answer)
    // T+70s  carol: "lunch anyone?"           plain (60 s after her answer)
    t.client.feedBufferGate([msg(1, 0, "morning", DAVE)]);
    await at(1000);
    t.client.recordOwnMessage({ msgId: "100", timestamp: T0 + 1000, content: "is the mirror back up?" });
    await at(10_000);
    t.client.feedBufferGate([msg(2, 10_000, "yes since noon", CAROL)]);
    await at(25_000);
    t.client.feedBufferGate([msg(3, 25_000, "but it is slow", CAROL)]);
    await at(70_000);
    t.client.feedBufferGate([msg(4, 70_000, "lunch anyone?", CAROL)]);
    await at(120_000);
    expect(accepted(t).slice(1)).toEqual([
      ["2", false, false, true, "after-our-line"],
      ["3", false, false, true, "continues-after-our-line"],
      ["4", false, false, false, null],
    ]);
  });
});

describe("a person typing line after line to us", () => {
  it("is answered engagedFollowUpMs after their first follow-up, with the lines that came meanwhile, not after the buffer's 15 s cap", async () => {
    const t = setup();
    // T+0s                      bob mentions us          → mention dispatch at T+0
    // T+10s, 14s, 18s, 22s      bob follows up every 4 s → the 5 s of quiet never come;
    // T+15s                     dispatch of the lines so far (T+10s + 5 s): T+10s, T+14s
    // T+18s line                → the next follow-up, 5 s later at T+23s, with the T+22s line
    t.client.feedBufferGate([msg(1, 0, "alice, the build is red", BOB)]);
    for (const [id, s] of [[2, 10], [3, 14], [4, 18], [5, 22]] as const) {
      await at(s * 1000);
      t.client.feedBufferGate([msg(id, s * 1000, `detail ${id}`, BOB)]);
    }
    await at(60_000);
    expect(t.calls.map((c) => [c.at, c.batch.mentionInfo.triggerType, c.ids])).toEqual([
      [0, "mention", ["1"]],
      [15_000, "engaged", ["2", "3"]],
      [23_000, "engaged", ["4", "5"]],
    ]);
  });
});

describe("a member's bot command is for the bot", () => {
  it("is not a follow-up of theirs to us, nor does it end their conversation; one naming us is a mention", async () => {
    const t = setup();
    await play(t, [
      [0, CAROL, "0", "hi"],
      [0, BOB, "1", "alice, grub will not install"], // mention
      [8000, BOB, "2", "!info grub-pc"], // bot-command (was engaged)
      [40_000, BOB, "3", "!raid | carol"], // bot-command
      [50_000, BOB, "4", "still stuck"], // engaged: the conversation with us goes on
      [60_000, BOB, "5", "!grub | alice"], // mention (names us)
    ]);
    await at(120_000);
    expect(accepted(t).slice(1)).toEqual([
      ["1", true, false, false, "mention"],
      ["2", false, false, false, "bot-command"],
      ["3", false, false, false, "bot-command"],
      ["4", false, true, false, "engaged"],
      ["5", true, false, false, "mention"],
    ]);
  });
});

describe("a bot's answer to a command of ours is for us", () => {
  const PUFF = "puff.agentcp.io";
  const BOT = "ubottu.agentcp.io";
  it("`!sound | puff` → the group's next line, opening with puff's name, answers our command: marked [engaged], the bot not engaged; a line after it is not", async () => {
    const t = setup();
    // T+0s    puff:   "can somebody help me with my disappearing sound?"   plain
    // T+5s    we:     "!sound | puff"                                       a command for puff
    // T+6s    ubottu: "puff: If you're having problems with sound, …"       answers our command
    //                                                                       (names puff, not us): [engaged]
    // T+7s    ubottu: "puff: see also …"                                    not the next line: addressed to puff
    //                                                                       (ubottu did not become engaged)
    // T+20s   puff:   "thanks"                                              puff was named by us, then addressed by
    //                                                                       ubottu: maybe ours (addressed-by-another)
    t.client.feedBufferGate([msg(1, 0, "can somebody help me with my disappearing sound?", PUFF)]);
    await at(5000);
    t.client.recordOwnMessage({ msgId: "100", timestamp: T0 + 5000, content: "!sound | puff" });
    await at(6000);
    t.client.feedBufferGate([msg(2, 6000, "puff: If you're having problems with sound, click the Volume applet", BOT)]);
    await at(7000);
    t.client.feedBufferGate([msg(3, 7000, "puff: see also the sound troubleshooting page", BOT)]);
    await at(20_000);
    t.client.feedBufferGate([msg(4, 20_000, "thanks", PUFF)]);
    await at(120_000);
    expect(accepted(t)).toEqual([
      ["1", false, false, false, null],
      ["2", false, true, false, "answers-our-command"],
      ["3", false, false, false, "addressed-other:puff"],
      ["4", false, false, true, "addressed-by-another"],
    ]);
    // The answer reached the model.
    expect(t.calls.some((c) => c.ids.includes("2"))).toBe(true);
  });

  it("a command without a target (`!wow`): the next line naming nobody answers it; one addressed to another member does not", async () => {
    const t = setup();
    // T+0s   carol: "wine sound stutters in games"   plain
    // T+5s   we:    "!wow"                            a command for the room
    // T+6s   bob:   "carol: try pulseaudio"           the next line, addressed to carol: not the answer
    // T+7s   ubottu: "Information about games …"      not the next line after our command: plain
    t.client.feedBufferGate([msg(1, 0, "wine sound stutters in games", CAROL)]);
    await at(5000);
    t.client.recordOwnMessage({ msgId: "100", timestamp: T0 + 5000, content: "!wow" });
    await at(6000);
    t.client.feedBufferGate([msg(2, 6000, "carol: try pulseaudio", BOB)]);
    await at(7000);
    t.client.feedBufferGate([msg(3, 7000, "Information about games on Ubuntu can be found at the wiki", BOT)]);
    await at(120_000);
    expect(accepted(t).map((a) => [a[0], a[3], a[4]])).toEqual([
      ["1", false, null],
      ["2", false, "addressed-other:carol"],
      ["3", true, "after-our-line"],
    ]);
  });

  it("`!wow` answered at once: the answer is [engaged], the bot's next line is its own (the bot is not an engaged speaker)", async () => {
    const t = setup();
    // T+0s   we:     "!wow"                                a command for the room
    // T+1s   ubottu: "Information about games …"          the next line, naming nobody: answers it, [engaged]
    // T+3s   ubottu: "For the rest, see the games page"    plain (was it engaged, this would be [engaged] too)
    t.client.recordOwnMessage({ msgId: "100", timestamp: T0, content: "!wow" });
    await at(1000);
    t.client.feedBufferGate([msg(1, 1000, "Information about games on Ubuntu can be found at the wiki", BOT)]);
    await at(3000);
    t.client.feedBufferGate([msg(2, 3000, "For the rest, see the games page", BOT)]);
    await at(60_000);
    expect(accepted(t)).toEqual([
      ["1", false, true, false, "answers-our-command"],
      ["2", false, false, false, null],
    ]);
  });

  it("someone else's command: the bot's answer naming its target is addressed to that member", async () => {
    const t = setup();
    // T+0s  puff: "my sound is gone"      T+5s  dave: "!sound | puff"      T+6s  ubottu: "puff: If you're …" → not ours
    t.client.feedBufferGate([msg(1, 0, "my sound is gone", PUFF)]);
    await at(5000);
    t.client.feedBufferGate([msg(2, 5000, "!sound | puff", DAVE)]);
    await at(6000);
    t.client.feedBufferGate([msg(3, 6000, "puff: If you're having problems with sound, click the Volume applet", BOT)]);
    await at(60_000);
    expect(accepted(t).map((a) => [a[0], a[3], a[4]])).toEqual([
      ["1", false, null],
      ["2", false, null],
      ["3", false, null],
    ]);
  });
});
