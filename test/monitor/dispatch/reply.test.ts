// The reply step (src/monitor/dispatch/reply.ts): a reply shaped to its type, then checked against
// our own recent replies (the group's memory) and, after the delay, against other members' lines.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { dedupOthers, dedupOwn, shape } from "../../../src/monitor/dispatch/reply.ts";
import { dedupKeyOf } from "../../../src/monitor/dedup.ts";
import { T0, batch, msg, testGroup } from "../helpers.ts";
import { stepRun } from "./step.ts";

const OWNER = "carol.agentcp.io";
const HELPER = "helper.agentcp.io";
const b = () => batch({ dispatchId: 2, now: T0, messages: [msg("1", OWNER, "Alice, why is CI red?", T0, { isMention: true })] });

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A group that has said `texts` already. */
function saidBefore(...texts: string[]) {
  const group = testGroup();
  texts.forEach((t, i) => group.memory.recordSent({ msgId: String(500 + i), timestamp: T0 - 60_000 + i, content: t, key: dedupKeyOf(t) }));
  return group;
}

describe("shape", () => {
  it.each([
    // written text, reply type → shaped, or the skip
    ["The lockfile is stale. Run npm install. Then push again.", "short", { text: "The lockfile is stale. Run npm install.", replyType: "short" }],
    ["**Stale lockfile** — run `npm install`.", "short", { text: "Stale lockfile — run npm install.", replyType: "short" }],
    ["👍 sure thing", "reaction", { text: "👍", replyType: "reaction" }],
    // Markdown stripping joins the token the model split: a silence after all.
    ["NO_`REPLY`", "short", { skip: "silent", detail: "no-reply-token" }],
    ["\u001b[31m\u202e", "short", { skip: "empty-after-trim" }],
  ] as const)("%j as %s → %j", (text, replyType, out) => {
    expect(shape(stepRun({ batch: b() }).run, { text, replyType })).toEqual(out);
  });
});

describe("dedupOwn: against our own recent replies (the group's memory)", () => {
  it("a new reply goes on with the key it will be remembered by", () => {
    const out = dedupOwn(stepRun({ batch: b(), group: saidBefore("Restart the runner.") }).run, { text: "The lockfile is stale.", replyType: "short" });
    expect(out).toEqual({ text: "The lockfile is stale.", replyType: "short", dup: { duplicate: false, ...dedupKeyOf("The lockfile is stale.") } });
  });

  it.each([
    // dedup.action, what we said before, the reply → the skip, or the reaction it became
    ["skip", "The lockfile is stale.", "the lockfile is STALE!", { skip: "duplicate-of-recent-reply", detail: "same-hash:1.00" }],
    ["reaction", "The lockfile is stale.", "👍 The lockfile is stale.", { text: "👍", replyType: "reaction" }],
    // The reaction itself was said lately too: skipped, naming that match.
    ["reaction", ["The lockfile is stale.", "👍"], "👍 The lockfile is stale.", { skip: "duplicate-of-recent-reply", detail: "same-hash:1.00" }],
  ] as const)("dedup.action %s, said %j, reply %j → %j", (action, said, text, out) => {
    const { run } = stepRun({ batch: b(), group: saidBefore(...(typeof said === "string" ? [said] : said)), settings: { dedup: { action } } });
    expect(dedupOwn(run, { text, replyType: "short" })).toMatchObject(out);
  });
});

describe("dedupOthers: after the delay, against other members' lines", () => {
  it("another member said it meanwhile (what arrived since the batch was taken) → skipped, naming who", () => {
    const said = msg("3", HELPER, "The lockfile is stale; run npm install.", T0 + 2000);
    const { run } = stepRun({ batch: b(), group: testGroup({ held: () => [said] }) });
    const unique = dedupOwn(run, { text: "The lockfile is stale — run npm install!", replyType: "short" });
    if ("skip" in unique || "again" in unique) throw new Error("not unique");
    expect(dedupOthers(run, unique, [])).toEqual({ skip: "duplicate-of-other-member", detail: `said-by:${HELPER}:same-hash:1.00` });
    // Nothing like it around: it goes on as it was.
    expect(dedupOthers(stepRun({ batch: b() }).run, unique, [])).toBe(unique);
  });

  it("othersHistorySize 0 turns the check off", () => {
    const said = msg("3", HELPER, "The lockfile is stale.", T0 + 2000);
    const { run } = stepRun({ batch: b(), group: testGroup({ held: () => [said] }), settings: { dedup: { othersHistorySize: 0 } } });
    const unique = dedupOwn(run, { text: "The lockfile is stale.", replyType: "short" });
    if ("skip" in unique || "again" in unique) throw new Error("not unique");
    expect(dedupOthers(run, unique, [])).toBe(unique);
  });
});
