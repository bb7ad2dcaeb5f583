// Who may talk to the agent one to one: dmPolicy (pairing | allowlist | open | disabled),
// allowFrom, denyFrom, the pairing store and a host's pairing hook — on the real direct runtime
// and pipeline (in-memory network, scripted model). A refused sender never reaches the model; the
// log says why; at most one line goes back. A stranger's DMs cost what a stranger's mentions do.
import { statSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPairingStore } from "../../src/state/pairing-store.ts";
import type { DirectPairing } from "../../src/types.ts";
import { tempDir } from "../network/support.ts";
import { directAgent, events, memoryNet, outcomes, type Agent } from "./harness.ts";

const OWNER = "owner.acp.local";

describe("who may DM the agent (the real direct runtime, in-memory network)", () => {
  const agents: Agent[] = [];
  const dirs: Array<{ cleanup(): void }> = [];
  afterEach(() => {
    for (const a of agents.splice(0)) a.runtime.close();
    for (const d of dirs.splice(0)) d.cleanup();
  });
  const dave = (identity: Record<string, unknown> = {}, extra: Partial<Parameters<typeof directAgent>[0]> = {}) => {
    const net = extra.net ?? memoryNet();
    const a = directAgent({ net, name: "dave", owner: OWNER, identity, ...extra });
    agents.push(a);
    const say = async (from: string, text: string) => {
      const before = a.decisions.length + events(a, "direct.refused").length + events(a, "direct.not-answered").length;
      await net.link(from).sendDirect({ peer: a.aid, text });
      await vi.waitFor(() => expect(a.decisions.length + events(a, "direct.refused").length + events(a, "direct.not-answered").length).toBeGreaterThan(before));
    };
    const heard = (who: string) => net.wire.filter((w) => w.to === who).map((w) => w.text);
    return { a, net, say, heard };
  };

  it("standalone default (allowlist): the owner, `humans` and allowFrom patterns are answered; a stranger reaches no model, hears nothing, and the log says why", async () => {
    const { a, say, heard } = dave({ allowFrom: ["*.friends.example"] }, { humans: ["hank.acp.local"] });
    await say(OWNER, "Dave, can you hear me?");
    await say("hank.acp.local", "hi from hank");
    await say("zoe.friends.example", "hi from zoe");
    await say("stranger.acp.local", "Dave, can you hear me?");
    expect(outcomes(a)).toEqual(["sent", "sent", "sent"]);
    expect(a.backend.calls.map((c) => c.conversation)).toEqual([
      { kind: "direct", peer: OWNER },
      { kind: "direct", peer: "hank.acp.local" },
      { kind: "direct", peer: "zoe.friends.example" },
    ]);
    expect(heard("stranger.acp.local")).toEqual([]);
    expect(events(a, "direct.refused")).toEqual([{ peer: "stranger.acp.local", reason: "not-allowed", sessionId: expect.any(String), chars: 22 }]);
    expect(a.runtime.policy).toBe("allowlist");
  });

  it("denyFrom wins over allowFrom and open, never over the owner; disabled refuses everyone; a configured notice goes out once an hour", async () => {
    vi.useFakeTimers();
    try {
      const { a, say, heard } = dave({ dmPolicy: "open", denyFrom: ["*.spam.example", OWNER], allowFrom: ["x.spam.example"], direct: { refusalNotice: "I only talk to people I know." } });
      await say("x.spam.example", "buy now");
      await say("x.spam.example", "buy now!!");
      await say(OWNER, "still me");
      await say("anyone.acp.local", "hello");
      expect(events(a, "direct.refused").map((e) => [e.peer, e.reason])).toEqual([
        ["x.spam.example", "denied"],
        ["x.spam.example", "denied"],
      ]);
      expect(heard("x.spam.example")).toEqual(["I only talk to people I know."]);
      await vi.advanceTimersByTimeAsync(3600_000);
      await say("x.spam.example", "an hour later");
      expect(heard("x.spam.example")).toEqual(["I only talk to people I know.", "I only talk to people I know."]);
      expect(outcomes(a)).toEqual(["sent", "sent"]);
    } finally {
      vi.useRealTimers();
    }
    const off = dave({ dmPolicy: "disabled" });
    await off.say(OWNER, "hello?");
    expect(events(off.a, "direct.refused").map((e) => e.reason)).toEqual(["dm-disabled"]);
    expect(off.a.backend.calls).toEqual([]);
  });

  it("pairing (standalone store): a stranger gets one line with a code, the owner approves it, the stranger is answered; revoked, refused again; files 0600", async () => {
    const tmp = tempDir("acp-pairing-");
    dirs.push(tmp);
    const store = createPairingStore({ dir: `${tmp.dir}/pairing` });
    const { a, say, heard } = dave({ dmPolicy: "pairing" }, { options: { pairing: store } });
    await say("erin.acp.local", "hi dave");
    await say("erin.acp.local", "hello??");
    const lines = heard("erin.acp.local");
    expect(lines).toHaveLength(1);
    const code = /Pairing code ([A-Z2-9]{8})/.exec(lines[0]!)![1]!;
    expect(lines[0]).toBe(`dave.acp.local answers only senders its owner approved. Pairing code ${code}: the owner approves it with \`acp-group pairing approve ${code} --identity dave.acp.local\` (good for an hour).`);
    expect(a.backend.calls).toEqual([]);
    expect(statSync(`${tmp.dir}/pairing/dave.acp.local.requests.json`).mode & 0o777).toBe(0o600);
    expect(() => store.approve({ aid: a.aid, code: "NOPE2345", now: Date.now() })).toThrow(/no pairing request with code NOPE2345/);
    expect(store.approve({ aid: a.aid, code: code.toLowerCase(), now: Date.now() })).toMatchObject({ peer: "erin.acp.local" });
    expect(statSync(`${tmp.dir}/pairing/dave.acp.local.approved.json`).mode & 0o777).toBe(0o600);
    await say("erin.acp.local", "approved now?");
    expect(outcomes(a)).toEqual(["sent"]);
    expect(store.revoke({ aid: a.aid, peer: "ERIN.acp.local" })).toBe(true);
    await say("erin.acp.local", "and now?");
    expect(events(a, "direct.refused").map((e) => e.reason)).toEqual(["pairing-required", "pairing-required", "pairing-required"]);
    expect(outcomes(a)).toEqual(["sent"]);
  });

  it("a host's pairing hook: asked only for senders no list admits, with the identity and the peer; its reply is the one line sent", async () => {
    const asked: unknown[] = [];
    const approved = new Set<string>();
    const hook: DirectPairing = {
      isApproved: (p) => (asked.push(["approved?", p]), approved.has(p.peer)),
      request: async (p) => (asked.push(["request", p]), { reply: `host pairing code for ${p.peer}` }),
    };
    const { a, say, heard } = dave({ dmPolicy: "pairing" }, { options: { defaultPolicy: "pairing", pairing: hook } });
    await say(OWNER, "me");
    await say("erin.acp.local", "hi");
    expect(asked).toEqual([
      ["approved?", { identityId: "dave", aid: "dave.acp.local", peer: "erin.acp.local" }],
      ["request", { identityId: "dave", aid: "dave.acp.local", peer: "erin.acp.local", now: expect.any(Number) }],
    ]);
    expect(heard("erin.acp.local")).toEqual(["host pairing code for erin.acp.local"]);
    approved.add("erin.acp.local");
    await say("erin.acp.local", "approved by the host");
    expect(outcomes(a)).toEqual(["sent", "sent"]);
  });

  it("the host's default policy applies when the identity sets none", async () => {
    const { a, say } = dave({}, { options: { defaultPolicy: "open" } });
    await say("erin.acp.local", "hi");
    expect(a.runtime.policy).toBe("open");
    expect(outcomes(a)).toEqual(["sent"]);
  });

  it("open: a stranger's DMs stop at their share, strangers together at the strangers' class share (as strangers' mentions do); the owner's never", async () => {
    // 6 addressed calls in 5 min: each sender 2 (senderShare 0.34), strangers together 3 (strangerShare 0.5).
    const budget = { addressed: { "5m": { messages: 6, tokens: 1_000_000 } } };
    const { a, say } = dave({ dmPolicy: "open" }, { config: { groups: { "*": { budget, senderShare: 0.34, strangerShare: 0.5 } } } });
    for (const q of ["first", "second", "third"]) await say("erin.acp.local", `${q} question?`);
    for (const q of ["first", "second"]) await say("frank.acp.local", `${q} question?`);
    for (let i = 0; i < 3; i++) await say(OWNER, `owner question ${i}?`);
    expect(outcomes(a)).toEqual(["sent", "sent", "sender-over-share", "sent", "strangers-over-share", "sent", "sent", "sent"]);
    expect(a.decisions[2]!.detail).toBe("erin.acp.local addressed:5m:messages 2/2");
    expect(a.decisions[4]!.detail).toBe("strangers addressed:5m:messages 3/3");
    expect(a.decisions.map((d) => d.payer)).toEqual(["erin.acp.local", "erin.acp.local", undefined, "frank.acp.local", undefined, OWNER, OWNER, OWNER]);
  });
});
