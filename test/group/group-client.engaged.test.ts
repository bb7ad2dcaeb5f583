// Engaged, but not everyone: who is in a conversation with us, and which of their lines are ours.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ALICE, T0, at, msg, setup } from "./harness.ts";
import { addressingLabel } from "../../src/group/addressing/reason.ts";
import type { InboundMessage } from "../../src/types.ts";
import { MemberDirectory } from "../../src/members/member-types.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

const BOB = "bob.agentcp.io";
const CAROL = "carol.agentcp.io";
const DAVE = "dave.agentcp.io";

function accepted(t: ReturnType<typeof setup>): Array<[string, boolean, boolean, string | null]> {
  return t.events.flatMap((e) => {
    if (e.type !== "accepted") return [];
    const m: InboundMessage = e.message;
    return [[m.msgId, m.isMention, m.engaged, addressingLabel(m.addressing)]];
  });
}

describe("engaged follow-ups", () => {
  it("a follow-up that opens by addressing another member is not ours, and ends the conversation", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "hi", CAROL)]);
    t.client.feedBufferGate([msg(2, 1000, "alice, can you look at the build?", BOB)]);
    await at(5000);
    t.client.feedBufferGate([msg(3, 5000, "carol: did you push it?", BOB)]);
    await at(40_000);
    t.client.feedBufferGate([msg(4, 40_000, "never mind, found it", BOB)]);
    await at(50_000);
    expect(accepted(t)).toEqual([
      ["1", false, false, null],
      ["2", true, false, "mention"],
      ["3", false, false, "addressed-other:carol"],
      // More than continuationMs after line 3 and no longer engaged: plain talk.
      ["4", false, false, null],
    ]);
  });

  it("`carol, …` and `@carol …` address carol too; a name nobody here has addresses nobody", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "hi", CAROL)]);
    t.client.feedBufferGate([msg(2, 100, "Alice?", BOB)]);
    t.client.feedBufferGate([msg(3, 200, "note: the build is red", BOB)]);
    t.client.feedBufferGate([msg(4, 300, "@carol see above", BOB)]);
    await at(1000);
    expect(accepted(t).slice(1)).toEqual([
      ["2", true, false, "mention"],
      // Inside continuationMs (30 s) of bob's mention: it continues it.
      ["3", false, true, "continues"],
      ["4", false, false, "addressed-other:carol"],
    ]);
  });

  it("a line within continuationMs of the sender's line to us continues it; a later one is plain", async () => {
    const t = setup({ settings: { engagedWindowMs: 20_000 } });
    t.client.feedBufferGate([msg(1, 0, "alice: here is the log", BOB)]);
    t.client.feedBufferGate([msg(2, 25_000, "err, the second half", BOB)]);
    t.client.feedBufferGate([msg(3, 90_000, "lunch?", BOB)]);
    await at(100_000);
    expect(accepted(t)).toEqual([
      ["1", true, false, "mention"],
      ["2", false, true, "continues"],
      ["3", false, false, null],
    ]);
  });

  it("`jacob: …` is a mention of `jacob_` (trailing _ or - dropped), `jacob …` alone is not", async () => {
    const t = setup({ identity: { aid: "jacob_.agentcp.io", name: "jacob_" } });
    t.client.feedBufferGate([msg(1, 0, "jacob: did it mount?", BOB)]);
    t.client.feedBufferGate([msg(2, 0, "jacob is a common name", CAROL)]);
    await at(5000);
    expect(accepted(t)).toEqual([
      ["1", true, false, "named-us:jacob"],
      ["2", false, false, null],
    ]);
  });

  it("someone else addressing an engaged speaker makes the conversation shared: maybe ours, not [engaged]", async () => {
    const t = setup();
    t.client.feedBufferGate([msg(1, 0, "alice, how do I mount it?", BOB)]);
    await at(3000);
    // bob answered us already (the mention); carol now talks to him.
    t.client.feedBufferGate([msg(2, 3000, "hi", DAVE)]);
    await at(40_000);
    t.client.feedBufferGate([msg(3, 40_000, "bob: try sudo", CAROL)]);
    await at(80_000);
    t.client.feedBufferGate([msg(4, 80_000, "it says permission denied", BOB)]);
    await at(90_000);
    const four = t.events.find((e) => e.type === "accepted" && e.message.msgId === "4");
    expect(four?.type === "accepted" && four.message).toMatchObject({ isMention: false, engaged: false, maybeOurs: true, addressing: { rule: "shared-conversation" } });
    // It went out as promptly as an engaged follow-up (engagedFollowUpMs 5 s), not after the cooldown.
    expect(t.calls.at(-1)).toMatchObject({ at: 85_000, ids: ["4"] });
    expect(t.calls.at(-1)!.batch.mentionInfo.triggerType).toBe("engaged");
  });
});

describe("addressees from the member list (group service and agent.md), before they have spoken", () => {
  it("`Bob, are you there?` from an engaged speaker goes to bob, a member who has not spoken yet — not to us", async () => {
    // The group service's member list names bob (get_members); bob has never spoken here.
    const members = new MemberDirectory();
    members.recordServiceMembers([{ agent_id: ALICE.aid, type: "agent" }, { agent_id: CAROL, type: "human" }, { agent_id: BOB, type: "human" }], "g1");
    const t = setup({ memberTypes: members });
    // T+0s     carol: "alice, hello"          → mention, carol engaged with us
    // T+10s    carol: "Bob, are you there?"   → addressed to bob (a member), not an engaged follow-up
    // T+60s    (nothing more for us)
    t.client.feedBufferGate([msg(1, 0, "alice, hello", CAROL)]);
    await at(10_000);
    t.client.feedBufferGate([msg(2, 10_000, "Bob, are you there?", CAROL)]);
    await at(60_000);
    expect(accepted(t)).toEqual([
      ["1", true, false, "mention"],
      ["2", false, false, "addressed-other:Bob"],
    ]);
    // Only the mention went to the model on the addressed path; line 2 waited for the normal path.
    expect(t.calls.map((c) => [c.at, c.batch.mentionInfo.triggerType, c.ids])).toEqual([
      [0, "mention", ["1"]],
      [t.calls[1]!.at, "normal", ["2"]],
    ]);
  });

  it("a name from a member's agent.md counts too; a bare opening needs the member seen speaking", async () => {
    const members = new MemberDirectory();
    members.recordServiceMembers([{ agent_id: CAROL }, { agent_id: "u-8841.agentcp.io" }], "g1");
    // u-8841's own agent.md calls it "Robin".
    members.recordProfile("u-8841.agentcp.io", "agent", "Robin");
    const t = setup({ memberTypes: members });
    t.client.feedBufferGate([msg(1, 0, "alice: the deploy failed", CAROL)]);
    t.client.feedBufferGate([msg(2, 2000, "robin: can you roll it back?", CAROL)]);
    await at(40_000);
    t.client.feedBufferGate([msg(3, 40_000, "robin is the name of a bird, alice", CAROL)]);
    t.client.feedBufferGate([msg(4, 41_000, "robin knows the rollback", CAROL)]);
    await at(80_000);
    expect(accepted(t)).toEqual([
      ["1", true, false, "mention"],
      ["2", false, false, "addressed-other:robin"],
      ["3", true, false, "mention"],
      // A bare `robin …` from a member list alone is too often an ordinary word: it continues line 3.
      ["4", false, true, "continues"],
    ]);
  });

  it("members of another group of the same identity are not members here", async () => {
    const members = new MemberDirectory();
    members.recordServiceMembers([{ agent_id: BOB }], "g2");
    const t = setup({ memberTypes: members });
    t.client.feedBufferGate([msg(1, 0, "alice, hello", CAROL)]);
    t.client.feedBufferGate([msg(2, 5000, "Bob, are you there?", CAROL)]);
    await at(20_000);
    expect(accepted(t)[1]).toEqual(["2", false, true, "continues"]);
  });
});

describe("an engaged speaker who turns to someone else's line", () => {
  it("two minutes past our last direct exchange, their line right after another member's goes as maybe ours, not [engaged]", async () => {
    const t = setup();
    // T+0s    bob:   "alice, how do I mount a usb disk?"  → mention: bob engaged, direct exchange at T+0s
    // T+30s   carol: "anyone here using wayland?"         → plain
    // T+50s   bob:   "it does show up in dmesg"           → engaged: right after carol, but T+0s was 50 s ago
    // T+200s  carol: "my screen tears under wayland"      → plain
    // T+210s  bob:   "try another compositor"             → after carol, 210 s past T+0s: maybe ours
    // T+215s  (dispatch of line 5, as promptly as a follow-up: engagedFollowUpMs 5 s of quiet)
    // T+230s  bob:   "or turn off vsync"                  → the same thought, maybe ours
    // T+300s  bob:   "the disk mounts now, thanks"        → after bob's own line: the conversation
    //                                                        is still open, engaged
    t.client.feedBufferGate([msg(1, 0, "alice, how do I mount a usb disk?", BOB)]);
    await at(30_000);
    t.client.feedBufferGate([msg(2, 30_000, "anyone here using wayland?", CAROL)]);
    await at(50_000);
    t.client.feedBufferGate([msg(3, 50_000, "it does show up in dmesg", BOB)]);
    await at(200_000);
    t.client.feedBufferGate([msg(4, 200_000, "my screen tears under wayland", CAROL)]);
    await at(210_000);
    t.client.feedBufferGate([msg(5, 210_000, "try another compositor", BOB)]);
    await at(230_000);
    t.client.feedBufferGate([msg(6, 230_000, "or turn off vsync", BOB)]);
    await at(300_000);
    t.client.feedBufferGate([msg(7, 300_000, "the disk mounts now, thanks", BOB)]);
    await at(400_000);
    expect(accepted(t)).toEqual([
      ["1", true, false, "mention"],
      ["2", false, false, null],
      ["3", false, true, "engaged"],
      ["4", false, false, null],
      ["5", false, false, "after-another-speaker"],
      ["6", false, false, "continues-after-our-line"],
      ["7", false, true, "engaged"],
    ]);
    const five = t.events.find((e) => e.type === "accepted" && e.message.msgId === "5");
    expect(five?.type === "accepted" && five.message.maybeOurs).toBe(true);
    // Not marked [engaged], but not left for the cooldown either: it went to the model 5 s later.
    const call5 = t.calls.find((c) => c.ids.includes("5"));
    expect(call5).toMatchObject({ at: 215_000 });
    expect(call5!.batch.mentionInfo.triggerType).toBe("engaged");
  });

  it("our own line to them is a direct exchange too: their line right after another member's stays engaged", async () => {
    const t = setup();
    // T+0s    bob:   "alice, how do I mount a usb disk?"  → mention: bob engaged
    // T+100s  alice: "bob: udisksctl mount -b /dev/sdb1"  → our line to bob: direct exchange at T+100s
    // T+150s  carol: "anyone here using wayland?"         → plain
    // T+160s  bob:   "it says not authorized"             → after carol, 160 s past his mention but
    //                                                        60 s past our line to him: engaged
    // T+400s  carol: "wayland tears here"                 → plain
    // T+410s  bob:   "works now"                          → after carol, 310 s past our line: maybe ours
    t.client.feedBufferGate([msg(1, 0, "alice, how do I mount a usb disk?", BOB)]);
    await at(100_000);
    t.client.feedBufferGate([msg("a1", 100_000, "bob: udisksctl mount -b /dev/sdb1", ALICE.aid)]);
    await at(150_000);
    t.client.feedBufferGate([msg(2, 150_000, "anyone here using wayland?", CAROL)]);
    await at(160_000);
    t.client.feedBufferGate([msg(3, 160_000, "it says not authorized", BOB)]);
    await at(400_000);
    t.client.feedBufferGate([msg(4, 400_000, "wayland tears here", CAROL)]);
    await at(410_000);
    t.client.feedBufferGate([msg(5, 410_000, "works now", BOB)]);
    await at(500_000);
    expect(accepted(t)).toEqual([
      ["1", true, false, "mention"],
      ["2", false, false, null],
      ["3", false, true, "engaged"],
      ["4", false, false, null],
      ["5", false, false, "after-another-speaker"],
    ]);
  });
});
