// Look-alike names kept by the directory and updated as the group service reports people: the
// same tags as a set built afresh from the same names, at the cost of the batch, not the directory.
import fc from "fast-check";
import { beforeAll, describe, expect, it, vi } from "vitest";

// Counts the look-alike keys computed: a set rebuilt per prompt computes one per known name.
const keys = vi.hoisted(() => ({ computed: 0 }));
vi.mock("../../src/monitor/confusables.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/monitor/confusables.ts")>();
  return {
    ...actual,
    lookalikeKey: (name: string) => {
      keys.computed++;
      return actual.lookalikeKey(name);
    },
  };
});

import { MemberDirectory, type MemberType } from "../../src/members/member-types.ts";
import { assembleDispatchPrompt } from "../../src/monitor/assemble.ts";
import { KnownNames, knownNames, NameIndex, WalkedNames } from "../../src/monitor/known-names.ts";
import type { InboundMessage } from "../../src/types.ts";
import { settingsWith, T0 } from "./helpers.ts";

const identity = { aid: "alice.acp.local", name: "Alice", aliases: [], owner: "owner.acp.local" };

function message(id: string, sender: string): InboundMessage {
  return { msgId: id, groupId: "g1", sender, content: "hello", contentType: "text", timestamp: T0, metadata: null, isMention: false, engaged: false };
}

// The setup file loaded the monitor before the mock above: these modules are loaded afresh, so
// that every look-alike key they compute is counted.
let fresh: { assembleDispatchPrompt: typeof assembleDispatchPrompt; MemberDirectory: typeof MemberDirectory };
beforeAll(async () => {
  vi.resetModules();
  fresh = { ...(await import("../../src/monitor/assemble.ts")), ...(await import("../../src/members/member-types.ts")) };
});

function prompt(messages: InboundMessage[], memberTypes: MemberDirectory) {
  return fresh.assembleDispatchPrompt({
    identity,
    settings: settingsWith({}),
    batch: {
      messages,
      vitality: { state: "ACTIVE" as const, messagesIn5m: messages.length, uniqueSpeakersIn5m: messages.length, myMessagesIn5m: 0, updatedAt: T0 },
      mentionInfo: { mentioned: false, mentionCount: 0, batchesMerged: 1, triggerType: "normal" as const },
      now: T0,
    },
    memberTypes,
  });
}

describe("a prompt build costs its batch, not the directory", () => {
  it("3,000 people by the service's word, one more before each of 20 dispatches: no dispatch rebuilds the names", () => {
    const members = new fresh.MemberDirectory({ owner: identity.owner });
    for (let i = 0; i < 3000; i++) members.recordService(`p${i}.acp.local`, "human");
    // The first build with a stranger in it computes the keys of every known name, once.
    prompt([message("0", "stranger.acp.local")], members);
    keys.computed = 0;
    for (let d = 1; d <= 20; d++) {
      members.recordService(`late${d}.acp.local`, "human");
      const parts = prompt([message(`${d}a`, `s${d}a.acp.local`), message(`${d}b`, `s${d}b.acp.local`), message(`${d}c`, `p${d}.acp.local`)], members);
      expect(parts.body).toContain(`s${d}a.acp.local: hello`);
    }
    // Per dispatch: the new person's two keys, and a few for each of the batch's three senders.
    // Rebuilt per dispatch, it would be 6,000 keys each (the key cache holds 1,024).
    expect(keys.computed).toBeLessThanOrEqual(20 * 12);
  });

  it("a config that names 20,000 people (a replay names every sender of its log): its keys are never computed for their own lines", () => {
    const humans = Array.from({ length: 20_000 }, (_, i) => `u${i}`);
    const members = new fresh.MemberDirectory({ owner: identity.owner, humans });
    keys.computed = 0;
    for (let d = 0; d < 20; d++) prompt([message(`${d}`, `u${d * 7}`), message(`${d}b`, `u${d * 7 + 1}`)], members);
    // Only the batches' senders are keyed (forSpeakers skips a named sender before keying it).
    expect(keys.computed).toBeLessThanOrEqual(20 * 2 * 2);
  });
});

// A small alphabet of look-alikes, so that random sets share keys and ranks collide.
const NAMES = ["sam", "sarn", "ṣam", "sᴀm", "SAM", "alice", "a1ice", "aIice", "sam.acp.local", "sarn.acp.local", "a1ice.acp.local", "bob", "b0b.acp.local"];
const SELF = ["alice.acp.local", "owner.acp.local"];

/** What every probe name shows as, alone and beside the whole alphabet in one batch. */
function shownBy(known: KnownNames): string[] {
  const beside = known.forSpeakers(NAMES);
  return NAMES.flatMap((n) => [known.show(n), beside.show(n), String(known.rankOf(n))]);
}

describe("property: names kept up to date show what a set built afresh from the same names shows", () => {
  it("a NameIndex under random adds and deletes, asked between changes", () => {
    const op = fc.record({ add: fc.boolean(), name: fc.constantFrom(...NAMES), rank: fc.constantFrom<2 | 3>(2, 3), ask: fc.boolean() });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const layers = { 3: new NameIndex(), 2: new NameIndex() };
        const kept = new KnownNames([{ rank: 3, names: layers[3] }, { rank: 2, names: layers[2] }]);
        // The model: each layer's names, oldest added first.
        const model = { 3: [] as string[], 2: [] as string[] };
        for (const o of ops) {
          const list = model[o.rank];
          if (o.add) {
            layers[o.rank].add(o.name);
            if (!list.includes(o.name)) list.push(o.name);
          } else {
            layers[o.rank].delete(o.name);
            if (list.includes(o.name)) list.splice(list.indexOf(o.name), 1);
          }
          if (o.ask) {
            const fresh = KnownNames.of([...model[3], ...model[2].map((aid) => ({ aid, rank: 2 as const }))]);
            expect(shownBy(kept)).toEqual(shownBy(fresh));
          }
        }
        const fresh = KnownNames.of([...model[3], ...model[2].map((aid) => ({ aid, rank: 2 as const }))]);
        expect(shownBy(kept)).toEqual(shownBy(fresh));
      }),
      { numRuns: 300 },
    );
  });

  it("a bounded directory under random service words (people, agents, unknowns; the oldest dropped past its bound)", () => {
    const word = fc.record({ name: fc.constantFrom(...NAMES), type: fc.constantFrom<MemberType>("human", "human", "agent", "unknown"), ask: fc.boolean() });
    fc.assert(
      fc.property(fc.array(word, { maxLength: 40 }), fc.subarray(["bob", "a1ice.acp.local", "sam"]), fc.integer({ min: 1, max: 5 }), (words, humans, maxEntries) => {
        const members = new MemberDirectory({ owner: SELF[1], humans, maxEntries });
        const kept = knownNames({ self: SELF, names: members.lookalikeNames() });
        const fresh = () => KnownNames.of([...SELF, ...humans, ...members.servicePersons().map((aid) => ({ aid, rank: 2 as const }))]);
        for (const w of words) {
          members.recordService(w.name, w.type);
          if (w.ask) expect(shownBy(kept)).toEqual(shownBy(fresh()));
        }
        expect(shownBy(kept)).toEqual(shownBy(fresh()));
      }),
      { numRuns: 300 },
    );
  });

  it("a directory naming its people without listing them (a replay: every sender of its log not an agent or a stranger) shows and types what one listing them shows", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 20 }),
        fc.subarray(["bob", "sam.acp.local", "SAM"]),
        fc.subarray(["sarn", "a1ice", "b0b.acp.local"]),
        (log, agentList, strangerList) => {
          const agents = new Set(agentList.map((a) => a.toLowerCase()));
          const strangers = new Set(strangerList.map((a) => a.toLowerCase()));
          // A replay's rule: a person is anyone not ourselves, an agent or a stranger; it is only
          // ever asked of the log's senders.
          const isPerson = (lower: string) => !SELF.includes(lower) && !agents.has(lower) && !strangers.has(lower);
          const humans = [...new Set(log)].filter((n) => isPerson(n.toLowerCase()));
          let walks = 0;
          const walked = new WalkedNames({
            has: isPerson,
            walk: function* () {
              walks++;
              yield* log;
            },
          });
          const listed = new MemberDirectory({ owner: SELF[1], agents: agentList, humans });
          const unlisted = new MemberDirectory({ owner: SELF[1], agents: agentList, people: { has: isPerson, names: walked } });
          const probes = [...log, ...agentList, ...strangerList];
          const seen = (members: MemberDirectory) => {
            const known = knownNames({ self: SELF, names: members.lookalikeNames() });
            const beside = known.forSpeakers(log);
            return probes.flatMap((n) => [known.show(n), beside.show(n), String(known.rankOf(n)), JSON.stringify(members.typeOf(n)), String(members.needsLookup(n))]);
          };
          expect(seen(unlisted)).toEqual(seen(listed));
          expect(unlisted.anyAgent(SELF[0]!)).toBe(listed.anyAgent(SELF[0]!));
          // Each key is looked for in one walk at most: asked again, it is answered from what was found.
          const before = walks;
          seen(unlisted);
          expect(walks).toBe(before);
        },
      ),
      { numRuns: 300 },
    );
  });
});
