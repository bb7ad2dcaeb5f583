// Text leaving us: what the model wrote before it is posted into a group, and what a member wrote
// before `start` prints it on a terminal. Pure; imports only the inbound cleaners.
import { stripControls } from "./sanitize.ts";

// Terminal escape sequences: CSI (ESC [ … final byte, or the one-byte C1 CSI), OSC / DCS / APC /
// PM / SOS strings up to BEL or ST, and two-byte escapes. Removed whole, so no stray "[31m" is left.
const ESCAPE_SEQUENCE =
  /(?:\u001B\[|\u009B)[\u0030-\u003F]*[\u0020-\u002F]*[\u0040-\u007E]?|(?:\u001B[\]PX^_]|[\u0090\u0098\u009D-\u009F])[^\u0007\u001B\u009C]*(?:\u0007|\u001B\\|\u009C)?|\u001B[\u0020-\u002F]*[\u0030-\u007E]?/g;
const HAS_ESCAPE = /[\u001B\u0090\u0098\u009B-\u009F]/;
// Line breaks stay in a reply (a model may write two short lines); every other control goes.
const LINE = /\r\n|[\r\u0085\u2028\u2029]/g;

/**
 * Model output made safe to post: terminal escape sequences, control characters (except line
 * breaks, normalised to "\n"), bidi overrides and lone surrogates removed. Emoji (with their
 * joiners), CJK and ordinary punctuation are untouched.
 */
export function cleanOutboundText(text: string): string {
  const noEscapes = HAS_ESCAPE.test(text) ? text.replace(ESCAPE_SEQUENCE, "") : text;
  const lines = noEscapes.replace(LINE, "\n").split("\n");
  return lines.map(stripControls).join("\n").trim();
}

// Everything a terminal could act on: C0 and C1 controls, DEL, bidi overrides and isolates.
const TERMINAL_UNSAFE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * One member-written string for a terminal line: controls are shown, never obeyed (ESC → "␛",
 * other C0 as their control pictures, C1, DEL and bidi controls as "�"), so a message cannot
 * recolour, move the cursor, retitle the window or reorder the line.
 */
export function displaySafe(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD").replace(TERMINAL_UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 ? String.fromCharCode(0x2400 + code) : "\uFFFD";
  });
}
