// Where the local group server keeps messages, its event log (member joined, left, …) and
// per-member ack cursors of both. Passing the same store (or the same file) to a restarted server
// keeps history, msg ids and event ids across the restart.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { GroupMessage } from "../types.ts";
import { parseWireMessage, toWireMessage } from "../wire/message.ts";
import { msgIdValue } from "../wire/msg-id.ts";
import { isPlain, type Plain } from "../wire/plain.ts";

/** One entry of a group's event log, in the SDK's `GroupEvent` shape. */
export interface StoredGroupEvent {
  event_id: number;
  event_type: string;
  actor: string;
  timestamp: number;
  target?: string;
  data?: Plain | null;
}

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
  /** A member joined (it is no longer one who left). */
  addJoined(groupId: string, aid: string): void;
  /** Members who left (`leave_group`): configured ones included, so a restart keeps them out. */
  left(groupId: string): readonly string[];
  /** A member left (it is no longer one who joined). */
  addLeft(groupId: string, aid: string): void;
  /** The group's invite code, once one was made. */
  inviteCode(groupId: string): string | undefined;
  setInviteCode(groupId: string, code: string): void;
  /** The group's events in event id order. */
  events(groupId: string): readonly StoredGroupEvent[];
  /** Appends an event whose id is above every stored one. */
  appendEvent(groupId: string, event: StoredGroupEvent): void;
  /** A member's acked event id, 0 when it never acked. */
  eventCursor(groupId: string, aid: string): number;
  setEventCursor(groupId: string, aid: string, eventId: number): void;
}

export function createMemoryHistoryStore(): GroupHistoryStore {
  const messages = new Map<string, GroupMessage[]>();
  const cursors = new Map<string, number>();
  const joined = new Map<string, string[]>();
  const left = new Map<string, string[]>();
  const invites = new Map<string, string>();
  const events = new Map<string, StoredGroupEvent[]>();
  const eventCursors = new Map<string, number>();
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
      left.set(groupId, (left.get(groupId) ?? []).filter((a) => a !== aid));
    },
    left: (groupId) => left.get(groupId) ?? [],
    addLeft(groupId, aid) {
      const list = left.get(groupId) ?? [];
      if (!list.includes(aid)) left.set(groupId, [...list, aid]);
      joined.set(groupId, (joined.get(groupId) ?? []).filter((a) => a !== aid));
    },
    inviteCode: (groupId) => invites.get(groupId),
    setInviteCode(groupId, code) {
      invites.set(groupId, code);
    },
    events: (groupId) => events.get(groupId) ?? [],
    appendEvent(groupId, event) {
      let list = events.get(groupId);
      if (!list) events.set(groupId, (list = []));
      list.push(event);
    },
    eventCursor: (groupId, aid) => eventCursors.get(`${groupId}\u0000${aid}`) ?? 0,
    setEventCursor(groupId, aid, eventId) {
      eventCursors.set(`${groupId}\u0000${aid}`, eventId);
    },
  };
}

/**
 * A JSON-lines log: `{"g":group,"m":<wire message>}`, `{"g":group,"a":aid,"c":cursor}`,
 * `{"g":group,"j":aid}` (joined), `{"g":group,"l":aid}` (left), `{"g":group,"i":code}` (invite code), `{"g":group,"e":<event>}`
 * and `{"g":group,"a":aid,"ec":event cursor}` records,
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
      if (mem.joined(groupId).includes(aid) && !mem.left(groupId).includes(aid)) return;
      write({ g: groupId, j: aid });
      mem.addJoined(groupId, aid);
    },
    left: mem.left,
    addLeft(groupId, aid) {
      if (mem.left(groupId).includes(aid) && !mem.joined(groupId).includes(aid)) return;
      write({ g: groupId, l: aid });
      mem.addLeft(groupId, aid);
    },
    inviteCode: mem.inviteCode,
    setInviteCode(groupId, code) {
      if (mem.inviteCode(groupId) === code) return;
      write({ g: groupId, i: code });
      mem.setInviteCode(groupId, code);
    },
    events: mem.events,
    appendEvent(groupId, event) {
      write({ g: groupId, e: event });
      mem.appendEvent(groupId, event);
    },
    eventCursor: mem.eventCursor,
    setEventCursor(groupId, aid, eventId) {
      if (mem.eventCursor(groupId, aid) === eventId) return;
      write({ g: groupId, a: aid, ec: eventId });
      mem.setEventCursor(groupId, aid, eventId);
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
  if ("e" in rec) {
    const event = parseStoredEvent(rec.e);
    const last = mem.events(rec.g).at(-1);
    if (!event || (last && last.event_id >= event.event_id)) return false;
    mem.appendEvent(rec.g, event);
    return true;
  }
  if (typeof rec.a === "string" && typeof rec.ec === "number" && Number.isSafeInteger(rec.ec)) {
    mem.setEventCursor(rec.g, rec.a, rec.ec);
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
  if (typeof rec.l === "string" && rec.l !== "") {
    mem.addLeft(rec.g, rec.l);
    return true;
  }
  if (typeof rec.i === "string" && rec.i !== "") {
    mem.setInviteCode(rec.g, rec.i);
    return true;
  }
  return false;
}

function parseStoredEvent(v: unknown): StoredGroupEvent | undefined {
  if (!isPlain(v)) return undefined;
  const { event_id: id, event_type: type, actor, timestamp, target, data } = v;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1 || typeof type !== "string" || typeof actor !== "string" || typeof timestamp !== "number") return undefined;
  if (target !== undefined && typeof target !== "string") return undefined;
  if (data !== undefined && data !== null && !isPlain(data)) return undefined;
  return { event_id: id, event_type: type, actor, timestamp, ...(target !== undefined ? { target } : {}), ...(data !== undefined ? { data } : {}) };
}
