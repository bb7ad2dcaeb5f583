// Issue 30.4: `chat` can never show a row that is not a real message's start. Seen on an
// 80-column terminal: a message padded with spaces wrapped so that a fake
// `12:34:56 [lobby] #997 alice.acp.local (agent): owner approved, sending key` row appeared;
// U+2028 passed raw; `(agent)`/`(you)` in content looked like our markers. Here the output is
// put through a model of a terminal (lines broken at N columns, wide characters 2, combining
// marks 0, every line or paragraph separator a new line) and every row is checked.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { chatCommand } from "../../src/cli/chat.ts";
import { CONTINUATION, createTranscript, formatTranscriptRows, outputWidth } from "../../src/cli/transcript.ts";
import { startDevNetwork } from "../../src/runtime/dev-network.ts";
import { tempDir, waitFor } from "../support/runtime-harness.ts";

let dirs: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const d of dirs) d.remove();
  dirs = [];
});

const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{1F000}-\u{1FAFF}\u{20000}-\u{3FFFD}]|\p{Extended_Pictographic}/u;
const ZERO = /[\p{M}\u200B-\u200F\u2060-\u2064\uFE00-\uFE0F\u{E0000}-\u{E01EF}]/u;

/** The rows an N-column terminal shows for `text`: a new row at every separator and at the edge. */
function terminalRows(text: string, columns: number): string[] {
  const rows: string[] = [];
  for (const line of text.split(/\r\n|[\n\r\u000B\u000C\u0085\u2028\u2029]/)) {
    let row = "";
    let used = 0;
    for (const ch of line) {
      const w = ZERO.test(ch) ? 0 : WIDE.test(ch) ? 2 : 1;
      if (used + w > columns) {
        rows.push(row);
        row = "";
        used = 0;
      }
      row += ch;
      used += w;
    }
    rows.push(row);
  }
  return rows;
}

const HEADER = /^\d\d:\d\d:\d\d \[/;

/** Every row of one printed message: the first is its header, every other a continuation. */
function expectOneMessage(printed: string, columns: number, header: string): void {
  const rows = terminalRows(printed, columns);
  expect(rows[0]!.startsWith(header)).toBe(true);
  for (const row of rows.slice(1)) {
    expect(HEADER.test(row)).toBe(false);
    expect(row.startsWith(CONTINUATION.trimEnd())).toBe(true);
  }
}

const FAKE = "12:34:56 [lobby] #997 alice.acp.local (agent): owner approved, sending key";

describe("the transcript row (pure)", () => {
  it("a message padded to wrap into a fake header at 80 columns: the rest is a continuation row, blanks collapsed", () => {
    const header = "09:00:00 [lobby] #5 mallory.acp.local: ";
    const content = `ok${" ".repeat(80 - header.length - 2)}${FAKE}`;
    const rows = formatTranscriptRows({ time: "09:00:00", groupId: "lobby", msgId: "5", sender: "mallory.acp.local", content, width: 80 });
    expect(rows).toEqual([`${header}ok 12:34:56 [lobby] #997 alice.acp.local`, `${CONTINUATION}‹agent›: owner approved, sending key`]);
    expectOneMessage(rows.join("\n"), 80, header);
  });

  it("padded with braille blanks, ideographic spaces or with no blanks at all: still no row that starts like a header", () => {
    const header = "09:00:00 [lobby] #5 mallory.acp.local: ";
    for (const pad of ["\u2800", "\u3000", "\u00A0", "x"]) {
      const content = `${pad.repeat(80 - header.length)}${FAKE}`;
      const printed = formatTranscriptRows({ time: "09:00:00", groupId: "lobby", msgId: "5", sender: "mallory.acp.local", content, width: 80 }).join("\n");
      expectOneMessage(printed, 80, header);
    }
  });

  it("U+2028, U+2029, NEL, CR and LF start continuation rows; bidi and escape controls are shown, never obeyed", () => {
    const rows = formatTranscriptRows({ time: "09:00:00", groupId: "lobby", msgId: "5", sender: "bob.acp.local", content: `one\u2028${FAKE}\u2029three\u0085four\r\nfive\u202Eevil\u001b[2J`, width: 200 });
    expect(rows).toEqual([
      "09:00:00 [lobby] #5 bob.acp.local: one",
      `${CONTINUATION}12:34:56 [lobby] #997 alice.acp.local ‹agent›: owner approved, sending key`,
      `${CONTINUATION}three`,
      `${CONTINUATION}four`,
      `${CONTINUATION}five\uFFFDevil␛[2J`,
    ]);
    expect(rows.join("\n")).not.toMatch(/[\u2028\u2029\u0085\r\u202E\u001b]/);
  });

  it("our markers appear only in the header: (agent), (you), (human) and look-alikes in text or in a sender are shown as ‹…›", () => {
    const rows = formatTranscriptRows({ time: "09:00:00", groupId: "lobby", msgId: "5", sender: "eve.acp.local (you)", marker: "human", content: "I am (agent) and (you) and ( Human ) and （agent） and (аgent) and (owner); (fine) stays", width: 300 });
    expect(rows).toEqual(["09:00:00 [lobby] #5 eve.acp.local ‹you› (human): I am ‹agent› and ‹you› and ‹Human› and ‹agent› and ‹аgent› and ‹owner›; (fine) stays"]);
  });

  it("CJK, emoji and combining text wrap inside the terminal's width and never split a grapheme", () => {
    const content = "漢字".repeat(30) + "👨‍👩‍👧".repeat(10) + "é".repeat(40);
    const rows = formatTranscriptRows({ time: "09:00:00", groupId: "g", msgId: "1", sender: "bob", content, width: 40 });
    expectOneMessage(rows.join("\n"), 40, "09:00:00 [g] #1 bob:");
    expect(rows.join("")).toContain("👨‍👩‍👧");
  });

  it("property: whatever a member writes, at any width ≥ 24, every terminal row is the header or a continuation", () => {
    const text = fc.string({ unit: fc.oneof(fc.constantFrom(" ", "\n", "\u2028", "\u2029", "\u0085", "\r", "\t", "\u3000", "\u2800", "(agent)", "(you)", "12:34:56 [lobby] #9 x: ", "\u202E", "\u001b[", "漢", "👍", "\u0301", "\u200D", "é"), fc.string({ unit: "binary", maxLength: 3 })), maxLength: 120 });
    fc.assert(
      fc.property(text, fc.string({ unit: "binary", maxLength: 20 }), fc.integer({ min: 24, max: 160 }), (content, sender, width) => {
        const printed = formatTranscriptRows({ time: "09:00:00", groupId: "lobby", msgId: "5", sender: sender || "bob", content, width }).join("\n");
        const rows = terminalRows(printed, width);
        expect(HEADER.test(rows[0]!)).toBe(true);
        for (const row of rows.slice(1)) expect(row.startsWith(CONTINUATION.trimEnd())).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("the width is the terminal's when stdout is one, else an exported $COLUMNS, else none (a pipe: no wrapping)", () => {
    expect(outputWidth({ isTTY: true, columns: 132 }, {})).toBe(132);
    expect(outputWidth({ isTTY: false }, { COLUMNS: "100" })).toBe(100);
    expect(outputWidth({}, {})).toBe(Number.POSITIVE_INFINITY);
    const long = formatTranscriptRows({ time: "09:00:00", groupId: "g", msgId: "1", sender: "bob", content: "x ".repeat(200), width: Number.POSITIVE_INFINITY });
    expect(long).toHaveLength(1);
  });

  it("createTranscript prints each message once, as one block of rows", () => {
    const out: string[] = [];
    const print = createTranscript((s) => void out.push(s), (s) => (s === "me" ? "you" : undefined), () => 80);
    const m = { groupId: "g", msgId: "1", sender: "me", content: "hi", timestamp: Date.UTC(2026, 0, 1, 9) } as Parameters<typeof print>[0];
    print(m);
    print(m);
    expect(out).toEqual(["09:00:00 [g] #1 me (you): hi"]);
  });
});

describe("acp-group chat against the local network (real sockets)", () => {
  it("a padded fake row, U+2028 and forged markers from another member: every row on an 80-column terminal is a real message's start or a continuation", async () => {
    const d = tempDir("chat-display");
    dirs.push(d);
    const dev = await startDevNetwork({ stateDir: d.dir, groups: { lobby: { members: { "mallory.acp.local": {} } } }, rateLimit: null });
    try {
      const header = "#1 mallory.acp.local: ";
      const padded = `ok${" ".repeat(80 - "00:00:00 [lobby] ".length - header.length - 2)}${FAKE}`;
      dev.service.post({ groupId: "lobby", sender: "mallory.acp.local", content: padded });
      dev.service.post({ groupId: "lobby", sender: "mallory.acp.local", content: `hello\u2028${FAKE}` });
      dev.service.post({ groupId: "lobby", sender: "mallory.acp.local", content: "erin.acp.local (you): I approve" });
      await dev.identity("erin.acp.local");
      const config = join(d.dir, "erin.json");
      writeFileSync(config, JSON.stringify({ stateDir: join(d.dir, "local-network"), identities: { erin: { aid: "erin.acp.local", accessPointUrl: dev.net.localUrl } } }));
      const out: string[] = [];
      const run = chatCommand([dev.service.joinLink("lobby"), "--identity", "erin", "--config", config, "--no-stdin", "--duration-ms", "1500"], { out: (s) => void out.push(s), err: () => {} }, { columns: 80 });
      await waitFor(() => out.some((l) => l.includes("#3 ")), "the history shown");
      expect(await run).toBe(0);
      const messages = out.filter((l) => HEADER.test(l));
      expect(messages).toHaveLength(3);
      for (const [i, printed] of messages.entries()) expectOneMessage(printed, 80, `${printed.slice(0, 8)} [lobby] #${i + 1} mallory.acp.local: `);
      expect(messages[2]).toMatch(/#3 mallory\.acp\.local: erin\.acp\.local ‹you›: I approve$/);
    } finally {
      await dev.close();
    }
  }, 30_000);
});
