// JSON text to a value, as `JSON.parse` gives it, for a log's lines. Why not `JSON.parse` itself:
// V8's parser interns every string value of up to 10 characters (the string goes to the old
// generation and into the string table), so a log whose ids (or reply ids, short lines…) are short
// and all different leaves one interned string per line behind, freed only by a full collection:
// 2 million lines made ~48 MB of old space and ~40 MB of string table before V8 collected them.
// Here a string value is a plain copy of its text, dropped with the line like the rest of it.
// Keys are strings too (object keys are interned by V8 on their own, as `JSON.parse` does).
// Iterative, so nesting as deep as a line allows needs no stack; a text `JSON.parse` refuses throws
// a SyntaxError here too.

let s = "";
let i = 0;
/** Whether the last string read held no escape. */
let plain = true;

function fail(): never {
  throw new SyntaxError(i < s.length ? `Unexpected character in JSON at position ${i}` : "Unexpected end of JSON input");
}

/** Skips JSON whitespace; the character code there, or -1 at the end. */
function ws(): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return c;
  }
  return -1;
}

/** The string whose opening quote is at `i`. */
function str(): string {
  const start = ++i;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 34) {
      plain = true;
      return s.slice(start, i++);
    }
    if (c === 92) {
      plain = false;
      return escaped(start);
    }
    if (c < 32) fail();
    i++;
  }
  return fail();
}

/**
 * Keys by their place in an object: a log's lines repeat the same keys in the same order, so the
 * key string of the last object is taken again when the text matches (no new string to intern).
 */
const lastKeys: string[] = [];

/** The key whose opening quote is at `i`, the `at`-th of its object. */
function keyAt(at: number): string {
  const last = lastKeys[at];
  if (last !== undefined && s.startsWith(last, i + 1) && s.charCodeAt(i + 1 + last.length) === 34) {
    i += last.length + 2;
    return last;
  }
  const k = str();
  // A key that held an escape is not its own text: never matched against a text.
  if (at < 64 && plain) lastKeys[at] = k;
  return k;
}

const hex = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

/** The rest of a string that holds an escape (at `i`; its text starts at `start`). */
function escaped(start: number): string {
  let out = s.slice(start, i);
  const n = s.length;
  let run = i;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 34) {
      out += s.slice(run, i++);
      return out;
    }
    if (c < 32) fail();
    if (c !== 92) {
      i++;
      continue;
    }
    out += s.slice(run, i);
    const e = s.charCodeAt(++i);
    let ch: string;
    switch (e) {
      case 34: ch = '"'; break;
      case 92: ch = "\\"; break;
      case 47: ch = "/"; break;
      case 98: ch = "\b"; break;
      case 102: ch = "\f"; break;
      case 110: ch = "\n"; break;
      case 114: ch = "\r"; break;
      case 116: ch = "\t"; break;
      case 117: {
        let code = 0;
        for (let k = 1; k <= 4; k++) {
          const h = hex(s.charCodeAt(i + k));
          if (h < 0) {
            i += k;
            fail();
          }
          code = code * 16 + h;
        }
        i += 4;
        ch = String.fromCharCode(code);
        break;
      }
      default:
        return fail();
    }
    out += ch;
    run = ++i;
  }
  return fail();
}

const digit = (c: number): boolean => c >= 48 && c <= 57;

/** The number at `i`. */
function num(): number {
  const start = i;
  let c = s.charCodeAt(i);
  const negative = c === 45;
  if (negative) c = s.charCodeAt(++i);
  if (c === 48) c = s.charCodeAt(++i);
  else if (c >= 49 && c <= 57) {
    do c = s.charCodeAt(++i);
    while (digit(c));
  } else fail();
  let integer = true;
  if (c === 46) {
    integer = false;
    if (!digit(s.charCodeAt(++i))) fail();
    do c = s.charCodeAt(++i);
    while (digit(c));
  }
  if (c === 101 || c === 69) {
    integer = false;
    c = s.charCodeAt(++i);
    if (c === 43 || c === 45) c = s.charCodeAt(++i);
    if (!digit(c)) fail();
    do c = s.charCodeAt(++i);
    while (digit(c));
  }
  // Up to 15 digits a sum of digits is exact; past that, or with a fraction or exponent, the
  // engine's own conversion rounds as JSON.parse does.
  if (!integer || i - start > 15) return Number(s.slice(start, i));
  let v = 0;
  for (let k = negative ? start + 1 : start; k < i; k++) v = v * 10 + (s.charCodeAt(k) - 48);
  return negative ? -v : v;
}

function word(w: string, v: boolean | null): boolean | null {
  if (!s.startsWith(w, i)) fail();
  i += w.length;
  return v;
}

/** Sets a member as JSON.parse does: an own property, `__proto__` included. */
function member(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === "__proto__") Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/** The value `text` holds, as `JSON.parse(text)` gives it; throws a SyntaxError where JSON.parse throws. */
export function parseJsonText(text: string): unknown {
  s = text;
  i = 0;
  try {
    const v = value();
    if (ws() !== -1) fail();
    return v;
  } finally {
    s = "";
  }
}

function value(): unknown {
  // Open arrays and objects, innermost last; for an object the key its next value goes under,
  // for an array null.
  const open: Array<unknown[] | Record<string, unknown>> = [];
  const keys: Array<string | null> = [];
  // For an object, how many keys it has had.
  const counts: number[] = [];
  for (;;) {
    let v: unknown;
    let c = ws();
    if (c === 123) {
      i++;
      const o: Record<string, unknown> = {};
      c = ws();
      if (c === 125) {
        i++;
        v = o;
      } else {
        if (c !== 34) fail();
        open.push(o);
        keys.push(keyAt(0));
        counts.push(1);
        if (ws() !== 58) fail();
        i++;
        continue;
      }
    } else if (c === 91) {
      i++;
      const a: unknown[] = [];
      if (ws() === 93) {
        i++;
        v = a;
      } else {
        open.push(a);
        keys.push(null);
        counts.push(0);
        continue;
      }
    } else if (c === 34) v = str();
    else if (c === 116) v = word("true", true);
    else if (c === 102) v = word("false", false);
    else if (c === 110) v = word("null", null);
    else v = num();
    // A whole value: into its container, closing every container it ends.
    for (;;) {
      const depth = open.length;
      if (depth === 0) return v;
      const top = open[depth - 1]!;
      const key = keys[depth - 1]!;
      c = ws();
      if (key === null) {
        (top as unknown[]).push(v);
        if (c === 44) {
          i++;
          break;
        }
        if (c !== 93) fail();
      } else {
        member(top as Record<string, unknown>, key, v);
        if (c === 44) {
          i++;
          if (ws() !== 34) fail();
          keys[depth - 1] = keyAt(counts[depth - 1]!++);
          if (ws() !== 58) fail();
          i++;
          break;
        }
        if (c !== 125) fail();
      }
      i++;
      open.pop();
      keys.pop();
      counts.pop();
      v = top;
    }
  }
}
