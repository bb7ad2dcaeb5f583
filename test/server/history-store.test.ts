import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileHistoryStore, createMemoryHistoryStore } from "../../src/server/history-store.ts";

const msg = (id: number, groupId = "g1") => ({
  msgId: String(id), groupId, sender: "bob.agentcp.io", content: `m${id}`, contentType: "text", timestamp: 1000 + id, metadata: null,
});

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("history stores", () => {
  it("memory: messages per group in order, cursors per (group, member)", () => {
    const s = createMemoryHistoryStore();
    s.append(msg(1));
    s.append(msg(1, "g2"));
    s.append(msg(2));
    s.setCursor("g1", "bob.agentcp.io", 2);
    expect(s.messages("g1").map((m) => m.msgId)).toEqual(["1", "2"]);
    expect(s.messages("g2").map((m) => m.msgId)).toEqual(["1"]);
    expect(s.messages("g3")).toEqual([]);
    expect(s.cursor("g1", "bob.agentcp.io")).toBe(2);
    expect(s.cursor("g2", "bob.agentcp.io")).toBe(0);
  });

  it("file: reloads what was written and skips a torn last line", () => {
    dir = mkdtempSync(join(tmpdir(), "acp-history-"));
    const file = join(dir, "h.jsonl");
    const a = createFileHistoryStore(file);
    a.append(msg(1));
    a.append(msg(2));
    a.setCursor("g1", "bob.agentcp.io", 1);
    a.setCursor("g1", "bob.agentcp.io", 1); // unchanged: not written again
    appendFileSync(file, '{"g":"g1","m":{"msg_id":3,"sen');
    const b = createFileHistoryStore(file);
    expect(b.skippedLines).toBe(1);
    expect(b.messages("g1")).toEqual([msg(1), msg(2)]);
    expect(b.cursor("g1", "bob.agentcp.io")).toBe(1);
    b.append(msg(3));
    expect(createFileHistoryStore(file).messages("g1").map((m) => m.msgId)).toEqual(["1", "2", "3"]);
  });
});
