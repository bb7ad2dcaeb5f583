// Where the local group server keeps messages and per-member ack cursors. Passing the same store
// (or the same file) to a restarted server keeps history and msg ids across the restart.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { GroupMessage } from "../types.ts";
import { parseWireMessage, toWireMessage } from "../wire/message.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import { isPlain } from "../wire/plain.ts";

export interface GroupHistoryStore {
  /** The group's messages in msg id order. */
  messages(groupId: string): readonly GroupMessage[];
  /** Appends a message whose msg id is above every stored one. */
  append(message: GroupMessage): void;
  /** A member's acked msg id, 0 when it never acked. */
  cursor(groupId: string, aid: string): number;
  setCursor(groupId: string, aid: string, msgId: number): void;
  /** Members who joined (by invite code or an approved request), beyond the configured ones. */
  joined(groupId: string): readonly string[];
  addJoined(groupId: string, aid: string): void;
  /** The group's invite code, once one was made. */
  inviteCode(groupId: string): string | undefined;
  setInviteCode(groupId: string, code: string): void;
}

export function createMemoryHistoryStore(): GroupHistoryStore {
  const messages = new Map<string, GroupMessage[]>();
  const cursors = new Map<string, number>();
  const joined = new Map<string, string[]>();
  const invites = new Map<string, string>();
  return {
    messages: (groupId) => messages.get(groupId) ?? [],
    append(message) {
      let list = messages.get(message.groupId);
      if (!list) messages.set(message.groupId, (list = []));
      list.push(message);
    },
    cursor: (groupId, aid) => cursors.get(`${groupId}\u0000${aid}`) ?? 0,
    setCursor(groupId, aid, msgId) {
      cursors.set(`${groupId}\u0000${aid}`, msgId);
    },
    joined: (groupId) => joined.get(groupId) ?? [],
    addJoined(groupId, aid) {
      const list = joined.get(groupId) ?? [];
      if (!list.includes(aid)) joined.set(groupId, [...list, aid]);
    },
    inviteCode: (groupId) => invites.get(groupId),
    setInviteCode(groupId, code) {
      invites.set(groupId, code);
    },
  };
}

/**
 * A JSON-lines log: `{"g":group,"m":<wire message>}`, `{"g":group,"a":aid,"c":cursor}`,
 * `{"g":group,"j":aid}` (joined) and `{"g":group,"i":code}` (invite code) records,
 * appended synchronously so a crash loses at most the line being written (a torn last line is
 * skipped on load).
 */
export function createFileHistoryStore(file: string): GroupHistoryStore & { skippedLines: number } {
  const mem = createMemoryHistoryStore();
  let skippedLines = 0;
  if (existsSync(file)) {
    const text = readFileSync(file, "utf8");
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      if (!loadLine(mem, line)) skippedLines++;
    }
    // End a torn last line so the next record starts on a line of its own.
    if (text.length > 0 && !text.endsWith("\n")) appendFileSync(file, "\n");
  } else {
    mkdirSync(dirname(file), { recursive: true });
  }
  // Invite codes are in it (anyone holding one may join): created 0600 like every state file.
  const write = (record: unknown) => appendFileSync(file, JSON.stringify(record) + "\n", { mode: 0o600 });
  return {
    skippedLines,
    messages: mem.messages,
    cursor: mem.cursor,
    append(message) {
      write({ g: message.groupId, m: toWireMessage(message) });
      mem.append(message);
    },
    setCursor(groupId, aid, msgId) {
      if (mem.cursor(groupId, aid) === msgId) return;
      write({ g: groupId, a: aid, c: msgId });
      mem.setCursor(groupId, aid, msgId);
    },
    joined: mem.joined,
    addJoined(groupId, aid) {
      if (mem.joined(groupId).includes(aid)) return;
      write({ g: groupId, j: aid });
      mem.addJoined(groupId, aid);
    },
    inviteCode: mem.inviteCode,
    setInviteCode(groupId, code) {
      if (mem.inviteCode(groupId) === code) return;
      write({ g: groupId, i: code });
      mem.setInviteCode(groupId, code);
    },
  };
}

function loadLine(mem: GroupHistoryStore, line: string): boolean {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch {
    return false;
  }
  if (!isPlain(rec) || typeof rec.g !== "string") return false;
  if ("m" in rec) {
    const parsed = parseWireMessage(rec.g, rec.m);
    if (!parsed.ok) return false;
    const list = mem.messages(rec.g);
    const last = list[list.length - 1];
    if (last && msgIdValue(last.msgId) >= msgIdValue(parsed.message.msgId)) return false;
    mem.append(parsed.message);
    return true;
  }
  if (typeof rec.a === "string" && typeof rec.c === "number" && Number.isSafeInteger(rec.c)) {
    mem.setCursor(rec.g, rec.a, rec.c);
    return true;
  }
  if (typeof rec.j === "string" && rec.j !== "") {
    mem.addJoined(rec.g, rec.j);
    return true;
  }
  if (typeof rec.i === "string" && rec.i !== "") {
    mem.setInviteCode(rec.g, rec.i);
    return true;
  }
  return false;
}
