import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createFileStateStore, defaultStateDir, StateError } from "../../src/state/file-store.ts";
import { encodeSafeName } from "../../src/state/safe-name.ts";
import { createMemoryLogger } from "../../src/log.ts";
import type { PersistedGroupState } from "../../src/types.ts";

const state = (over: Partial<PersistedGroupState> = {}): PersistedGroupState => ({
  version: 1,
  cursor: 42,
  lastSelfSpeakAt: 1_700_000_000_000,
  replyHashes: ["a1b2c3d4e5f60718"],
  replyTexts: ["hello there"],
  budgetEvents: [
    [1_700_000_000_000, 120, 0],
    [1_700_000_060_000, 80, 1],
  ],
  agentChain: 2,
  ...over,
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-state-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const filesUnder = (d: string): string[] =>
  readdirSync(d, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(d.length + 1))
    .sort();

describe("createFileStateStore", () => {
  it("round-trips group state and conversations, and a new store on the same dir (restart) sees them", () => {
    const a = createFileStateStore({ dir });
    expect(a.loadGroup("alice.agentcp.io", "g1")).toBeUndefined();
    expect(a.loadConversation("alice.agentcp.io", "g1")).toBeUndefined();

    a.saveGroup("alice.agentcp.io", "g1", state());
    a.saveConversation("alice.agentcp.io", "g1", { version: 1, entries: [{ role: "system", content: "你好" }] });
    a.saveGroup("alice.agentcp.io", "g2", state({ cursor: 7 }));

    const b = createFileStateStore({ dir });
    expect(b.dir).toBe(dir);
    expect(b.loadGroup("alice.agentcp.io", "g1")).toEqual(state());
    expect(b.loadGroup("alice.agentcp.io", "g2")?.cursor).toBe(7);
    expect(b.loadConversation("alice.agentcp.io", "g1")).toEqual({ version: 1, entries: [{ role: "system", content: "你好" }] });
    expect(b.loadGroup("bob.agentcp.io", "g1")).toBeUndefined();

    // A later save replaces the earlier one.
    b.saveGroup("alice.agentcp.io", "g1", state({ cursor: 43, agentChain: 0 }));
    expect(createFileStateStore({ dir }).loadGroup("alice.agentcp.io", "g1")).toMatchObject({ cursor: 43, agentChain: 0 });
  });

  it("keeps ids apart that differ only in case or in unsafe characters, and never escapes the dir", () => {
    const store = createFileStateStore({ dir });
    const ids = ["G1", "g1", "../etc", "..", ".", "a/b", "a%2Fb", "群聊", "x".repeat(300), "x".repeat(300) + "y", ""];
    ids.forEach((g, i) => store.saveGroup("alice.agentcp.io", g, state({ cursor: i })));
    ids.forEach((g, i) => expect(store.loadGroup("alice.agentcp.io", g)?.cursor).toBe(i));

    const files = filesUnder(dir);
    expect(files).toHaveLength(ids.length);
    for (const f of files) {
      expect(f.startsWith("alice.agentcp.io/")).toBe(true);
      const name = f.slice("alice.agentcp.io/".length);
      expect(name).not.toContain("/");
      expect(name.startsWith(".")).toBe(false);
      expect(Buffer.byteLength(name)).toBeLessThan(200);
    }
    expect(existsSync(join(dir, "..", "etc.group.json"))).toBe(false);
  });

  it("writes atomically: a temp file left by a crash is ignored, and no temp file remains after a save", () => {
    const store = createFileStateStore({ dir });
    store.saveGroup("alice.agentcp.io", "g1", state({ cursor: 5 }));
    const target = join(dir, "alice.agentcp.io", "g1.group.json");
    // What a crash between write and rename leaves behind: a half-written sibling.
    writeFileSync(`${target}.tmp-999-deadbeef`, '{"kind":"group-state","identityId":"alice.agentc');

    const after = createFileStateStore({ dir });
    expect(after.loadGroup("alice.agentcp.io", "g1")?.cursor).toBe(5);

    after.saveGroup("alice.agentcp.io", "g1", state({ cursor: 6 }));
    expect(after.loadGroup("alice.agentcp.io", "g1")?.cursor).toBe(6);
    expect(filesUnder(dir)).toEqual(["alice.agentcp.io/g1.group.json", "alice.agentcp.io/g1.group.json.tmp-999-deadbeef"]);
    // The file on disk is complete JSON that names its owner.
    const onDisk = JSON.parse(readFileSync(target, "utf8"));
    expect(onDisk).toMatchObject({ kind: "group-state", identityId: "alice.agentcp.io", groupId: "g1", data: { cursor: 6 } });
  });

  it("moves a torn or malformed file aside (*.corrupt-<ts>), logs it, and starts fresh", () => {
    const logger = createMemoryLogger();
    const store = createFileStateStore({ dir, logger, now: () => 1_700_000_123_456 });
    const target = join(dir, "alice.agentcp.io", "g1.group.json");
    mkdirSync(join(dir, "alice.agentcp.io"), { recursive: true });
    writeFileSync(target, '{"kind":"group-state","identityId":"alice.agentcp.io","gro');

    expect(store.loadGroup("alice.agentcp.io", "g1")).toBeUndefined();
    expect(filesUnder(dir)).toEqual(["alice.agentcp.io/g1.group.json.corrupt-1700000123456"]);
    expect(logger.entries).toHaveLength(1);
    expect(logger.entries[0]).toMatchObject({
      level: "warn",
      event: "state.corrupt",
      fields: { identityId: "alice.agentcp.io", groupId: "g1", movedTo: `${target}.corrupt-1700000123456` },
    });

    // Valid JSON, wrong shape (negative cursor, missing fields) is corrupt too.
    writeFileSync(
      target,
      JSON.stringify({ kind: "group-state", identityId: "alice.agentcp.io", groupId: "g1", savedAt: "x", data: { version: 1, cursor: -1 } }),
    );
    expect(createFileStateStore({ dir, logger, now: () => 1_700_000_999_000 }).loadGroup("alice.agentcp.io", "g1")).toBeUndefined();
    expect(filesUnder(dir)).toEqual([
      "alice.agentcp.io/g1.group.json.corrupt-1700000123456",
      "alice.agentcp.io/g1.group.json.corrupt-1700000999000",
    ]);
    expect(logger.entries[1]?.fields.problem).toContain("cursor");

    // Saving afterwards works and is what the next load sees.
    store.saveGroup("alice.agentcp.io", "g1", state({ cursor: 1 }));
    expect(store.loadGroup("alice.agentcp.io", "g1")?.cursor).toBe(1);
  });

  it("handles a corrupt conversation file the same way", () => {
    const logger = createMemoryLogger();
    const store = createFileStateStore({ dir, logger, now: () => 5 });
    mkdirSync(join(dir, "alice.agentcp.io"), { recursive: true });
    writeFileSync(join(dir, "alice.agentcp.io", "g1.conversation.json"), "not json at all");
    expect(store.loadConversation("alice.agentcp.io", "g1")).toBeUndefined();
    expect(filesUnder(dir)).toEqual(["alice.agentcp.io/g1.conversation.json.corrupt-5"]);
    expect(logger.entries.map((e) => e.event)).toEqual(["state.corrupt"]);
  });

  it("does not hand one id's file to another (the ids inside the file are the authority)", () => {
    const logger = createMemoryLogger();
    const store = createFileStateStore({ dir, logger });
    store.saveGroup("alice.agentcp.io", "g1", state());
    const other = join(dir, "alice.agentcp.io", "g2.group.json");
    writeFileSync(other, readFileSync(join(dir, "alice.agentcp.io", "g1.group.json")));
    expect(store.loadGroup("alice.agentcp.io", "g2")).toBeUndefined();
    expect(logger.entries.map((e) => e.event)).toEqual(["state.foreign-file"]);
  });

  it("throws a typed StateError when the directory cannot be written, naming identity, group and file", () => {
    const blocker = join(dir, "not-a-dir");
    writeFileSync(blocker, "x");
    const store = createFileStateStore({ dir: blocker });
    let caught: unknown;
    try {
      store.saveGroup("alice.agentcp.io", "g1", state());
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(StateError);
    expect(caught).toMatchObject({ code: "STATE_WRITE_FAILED", identityId: "alice.agentcp.io", groupId: "g1" });
    expect((caught as StateError).file).toContain("g1.group.json");
  });

  it("refuses to treat an unreadable file as missing (that would reset cursor and budget)", () => {
    const store = createFileStateStore({ dir });
    // A directory where the file should be: readable by nobody as a file, whatever the uid.
    mkdirSync(join(dir, "alice.agentcp.io", "g1.group.json"), { recursive: true });
    let caught: unknown;
    try {
      store.loadGroup("alice.agentcp.io", "g1");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(StateError);
    expect(caught).toMatchObject({ code: "STATE_READ_FAILED", identityId: "alice.agentcp.io", groupId: "g1" });
  });
});

describe("defaultStateDir", () => {
  it("uses ACP_GROUP_STATE_DIR when set, else ~/.acp-group/state", () => {
    expect(defaultStateDir({ ACP_GROUP_STATE_DIR: "/srv/acp" })).toBe("/srv/acp");
    expect(defaultStateDir({ HOME: "/home/ann" })).toBe("/home/ann/.acp-group/state");
    expect(defaultStateDir({ HOME: "/home/ann", ACP_GROUP_STATE_DIR: "  " })).toBe("/home/ann/.acp-group/state");
  });
});

describe("encodeSafeName", () => {
  it("keeps plain aids readable and escapes everything else", () => {
    expect(encodeSafeName("alice.agentcp.io")).toBe("alice.agentcp.io");
    expect(encodeSafeName("Bob")).toBe("%42ob");
    expect(encodeSafeName("..")).toBe("%2E.");
    expect(encodeSafeName("a/b")).toBe("a%2Fb");
    expect(encodeSafeName("a%2Fb")).toBe("a%252%46b");
    expect(encodeSafeName("群")).toBe("%E7%BE%A4");
  });
});
