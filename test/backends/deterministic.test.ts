import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BackendAbortedError, createScriptedBackend, offlineReplyText } from "../../src/backends/deterministic.ts";
import { rememberReply } from "../../src/group/memory.ts";
import { checkDuplicate } from "../../src/monitor/dedup.ts";
import type { GenerateRequest, InboundMessage } from "../../src/types.ts";

function request(p: { mentioned?: boolean; phase?: "decide" | "reply"; messages?: InboundMessage[]; signal?: AbortSignal } = {}): GenerateRequest {
  return {
    identityId: "alice",
    groupId: "g1",
    dispatchId: 1,
    trigger: p.mentioned ? "mention" : "normal",
    systemPrompt: "x".repeat(40),
    stablePrefix: "x".repeat(20),
    body: "y".repeat(8),
    messages: p.messages ?? [
      { msgId: "1", groupId: "g1", sender: "bob.agentcp.io", content: "is the build green?", contentType: "text", timestamp: 0, metadata: null, isMention: !!p.mentioned, engaged: false },
    ],
    mentionInfo: { mentioned: !!p.mentioned, mentionCount: p.mentioned ? 1 : 0, batchesMerged: 1, triggerType: p.mentioned ? "mention" : "normal" },
    replyType: "short",
    maxChars: 500,
    ...(p.phase ? { phase: p.phase } : {}),
    ...(p.signal ? { signal: p.signal } : {}),
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("createScriptedBackend", () => {
  it("silent: always NO_REPLY, with deterministic usage", async () => {
    const b = createScriptedBackend({ mode: "silent", replyText: "hi" });
    expect(await b.generate(request({ mentioned: true }))).toEqual({ text: "NO_REPLY", usage: { promptTokens: 12, completionTokens: 2 } });
    expect(b.name).toBe("scripted:silent");
  });

  it("mention: replies only when mentioned", async () => {
    const b = createScriptedBackend({ mode: "mention", replyText: "on it" });
    expect((await b.generate(request())).text).toBe("NO_REPLY");
    expect((await b.generate(request({ mentioned: true }))).text).toBe("on it");
    expect(b.calls).toHaveLength(2);
  });

  it("always: replies with the text, a function of the request, or a labelled offline echo", async () => {
    expect((await createScriptedBackend({ mode: "always", replyText: "yes" }).generate(request())).text).toBe("yes");
    expect((await createScriptedBackend({ mode: "always", replyText: (r) => `n=${r.messages.length}` }).generate(request())).text).toBe("n=1");
    expect((await createScriptedBackend({ mode: "always" }).generate(request())).text).toBe("(offline responder) bob.agentcp.io said: is the build green?");
  });

  it("helpful: replies to a mention or a batch holding a question (? or ？), else stays silent", async () => {
    const b = createScriptedBackend({ mode: "helpful" });
    const said = (content: string, sender = "bob.agentcp.io", msgId = "1"): InboundMessage => ({ msgId, groupId: "g1", sender, content, contentType: "text", timestamp: 0, metadata: null, isMention: false, engaged: false });
    expect((await b.generate(request({ messages: [said("the build is green")] }))).text).toBe("NO_REPLY");
    expect((await b.generate(request({ messages: [said("构建好了吗？")] }))).text).toMatch(/^\(offline responder\) bob\.agentcp\.io: [a-z ]+\.$/);
    expect((await b.generate(request({ mentioned: true, messages: [{ ...said("alice, the build"), isMention: true }] }))).text).not.toBe("NO_REPLY");
    // It answers the newest question in its own words, never with a question of its own.
    const answer = (await b.generate(request({ messages: [said("is the build green?"), said("thanks", "carol.agentcp.io", "2")] }))).text;
    expect(answer).toMatch(/^\(offline responder\) bob\.agentcp\.io: [a-z ]+\.$/);
    // Two agents answering one question do not say the same; one agent, two questions neither.
    const byCarol = (await b.generate({ ...request({ messages: [said("is the build green?")] }), identityId: "carol" })).text;
    const other = (await b.generate(request({ messages: [said("is the deploy done?", "bob.agentcp.io", "9")] }))).text;
    expect(new Set([answer, byCarol, other]).size).toBe(3);
    expect(b.name).toBe("scripted:helpful");
  });

  it("answers the two-phase decide call with JSON", async () => {
    const b = createScriptedBackend({ mode: "mention" });
    expect(JSON.parse((await b.generate(request({ phase: "decide" }))).text)).toEqual({ want_to_reply: false, reply_type: "short", delay_hint: "fast" });
    expect(JSON.parse((await b.generate(request({ phase: "decide", mentioned: true }))).text)).toEqual({ want_to_reply: true, reply_type: "short", delay_hint: "fast" });
  });

  it("takes latencyMs of timer time and can be aborted", async () => {
    const b = createScriptedBackend({ mode: "always", replyText: "late", latencyMs: 2000 });
    let done = false;
    const p = b.generate(request()).then((r) => {
      done = true;
      return r;
    });
    await vi.advanceTimersByTimeAsync(1999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((await p).text).toBe("late");

    const ac = new AbortController();
    const q = b.generate(request({ signal: ac.signal }));
    await vi.advanceTimersByTimeAsync(500);
    ac.abort();
    await expect(q).rejects.toBeInstanceOf(BackendAbortedError);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("offlineReplyText (the demo's offline responder)", () => {
  const asked = (content: string): Pick<GenerateRequest, "messages"> => ({
    messages: [{ msgId: "1", groupId: "lobby", sender: "sam.acp.local", content, contentType: "text", timestamp: 0, metadata: null, isMention: true, engaged: false }],
  });
  // Pairs whose old answers ("heard <sender>: <question>") were 0.80–0.92 similar.
  const QUESTIONS = ["Bob, are you here?", "Bob, any news?", "Bob, can you hear me?", "Bob, ready?", "Bob, and you?", "Bob, is it done?"];

  it("answers different questions with answers dedup keeps apart, and the same question with the same answer (a repeat)", async () => {
    for (const a of QUESTIONS) {
      const first = checkDuplicate({ text: offlineReplyText(asked(a), "[offline responder]"), memory: { hashes: [], texts: [] }, threshold: 0.8 });
      const memory = rememberReply({ hashes: [], texts: [] }, first, 10);
      for (const b of QUESTIONS) {
        const again = checkDuplicate({ text: offlineReplyText(asked(b), "[offline responder]"), memory, threshold: 0.8 });
        if (a === b) expect(again).toMatchObject({ duplicate: true, reason: "same-hash" });
        else expect(again.duplicate, `${a} → ${b}`).toBe(false);
      }
    }
  });
});
