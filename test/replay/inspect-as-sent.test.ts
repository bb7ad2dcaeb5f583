// `inspect --as-sent` prints the request the standalone back-end really sends: checked against
// what the back-end sends to a local OpenAI-compatible mock (the hosted model is what cannot exist
// here), before and after a stored NO_REPLY turn.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfigFile } from "../../src/config/load.ts";
import { createConversationRegistry } from "../../src/backends/conversation-registry.ts";
import { createOpenAIBackend } from "../../src/backends/standalone.ts";
import { createFileStateStore } from "../../src/state/file-store.ts";
import type { GenerateRequest } from "../../src/types.ts";
import { startOpenAIMock, type OpenAIMock } from "../support/openai-mock.ts";
import { line, runCli, T0, tempDir, type TempDir } from "./helpers.ts";

type Chat = { model: string; max_tokens: number; messages: Array<{ role: string; content: string }> };

let dir: TempDir;
let mock: OpenAIMock;
let cfg: string;
let log: string;
beforeAll(async () => {
  dir = tempDir();
  mock = await startOpenAIMock();
  cfg = dir.json("cfg.json", {
    stateDir: `${dir.path}/state`,
    llm: { baseUrl: mock.baseUrl, model: "test-model", stream: false },
    identities: { alice: { aid: "alice.agentcp.io", name: "Alice" } },
    groups: { g1: { subject: "Release planning" } },
  });
  log = dir.jsonl("log.jsonl", [line("a", T0, "bob", "has anyone tried the release?"), line("b", T0 + 2000, "carol", "Alice, what do you think?")]);
});
afterAll(async () => {
  await mock.close();
  dir.remove();
});

const inspectArgs = () => ["inspect", "--config", cfg, "--group", "g1", "--log", log, "--at", String(T0 + 2000)];

async function asSent(): Promise<Chat> {
  const run = await runCli([...inspectArgs(), "--as-sent", "--json"]);
  expect(run.err).toBe("");
  return JSON.parse(run.out) as Chat;
}

describe("inspect --as-sent", () => {
  it("matches what the standalone back-end sends, before and after a silent turn", async () => {
    const before = await asSent();
    // The system message is the stable prefix alone; the situation opens the user turn.
    expect(before.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(before.messages[0]!.content).not.toContain("## Group Situation Context");
    expect(before.messages[1]!.content.startsWith("## Group Situation Context")).toBe(true);
    expect(before.messages[1]!.content).toContain("Alice, what do you think?");

    // The same dispatch through the real back-end, its conversation stored in the config's state dir.
    const prompt = JSON.parse((await runCli([...inspectArgs(), "--json"])).out) as { systemPrompt: string; stablePrefix: string; body: string };
    const config = loadConfigFile(cfg);
    const conversations = createConversationRegistry({ historyTokenLimit: config.llm.historyTokenLimit, persistence: createFileStateStore({ dir: config.stateDir! }) });
    const backend = createOpenAIBackend({ llm: config.llm, env: {}, conversations });
    mock.enqueue({ text: "NO_REPLY" });
    const request: GenerateRequest = {
      identityId: "alice",
      groupId: "g1",
      dispatchId: 1,
      trigger: "mention",
      ...prompt,
      messages: [],
      mentionInfo: { mentioned: true, mentionCount: 1, batchesMerged: 2, triggerType: "mention" },
      replyType: "short",
      maxChars: 300,
    };
    await backend.generate(request);
    await backend.close?.();
    const sent = mock.chatRequests()[0]!.body as Chat;
    expect({ model: sent.model, max_tokens: sent.max_tokens, messages: sent.messages }).toEqual(before);

    // Next time the history is there, and after the NO_REPLY the roles still alternate.
    const after = await asSent();
    expect(after.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(after.messages[2]!.content).toBe("NO_REPLY");
    expect(after.messages.slice(0, 2)).toEqual(before.messages);
  });

  it("as text: one block per message, with the model named", async () => {
    const run = await runCli([...inspectArgs(), "--as-sent"]);
    expect(run.out.split("\n")[0]).toMatch(/^# chat request as sent · test-model at http:\/\/127\.0\.0\.1:\d+\/v1 · \d message\(s\), history from /);
    expect(run.out).toContain("\n===== system =====\n");
    expect(run.out).toContain("\n===== user =====\n## Group Situation Context");
  });
});
