// Unicode look-alike folding (a UTS #39 style skeleton) for the few places that must see through
// disguises: marker detection in message text and sender names that imitate another aid. The
// table is the Unicode confusables data as packaged by `unhomoglyph` (one code point → its
// prototype), loaded once per process and shared by every identity and group.
import { createRequire } from "node:module";

const table = createRequire(import.meta.url)("unhomoglyph/data.json") as Record<string, string>;

// Keyed by code point: one Map lookup per character, no regex alternation over 6,000 keys.
const PROTOTYPE = new Map<number, string>();
for (const [from, to] of Object.entries(table)) {
  const cp = from.codePointAt(0);
  if (cp !== undefined && from.length === String.fromCodePoint(cp).length) PROTOTYPE.set(cp, to);
}

// Small capitals have no confusables entry at the same case, yet a model reads "ᴍᴇɴᴛɪᴏɴᴇᴅ" as a
// word: folded too, with the few lower-case prototypes the table leaves non-Latin.
// Only for markers (`loose`): for names it would make honest Cyrillic ("иван") look like Latin.
const LOOSE = new Map<number, string>();
const SMALL_CAPS = "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡxʏᴢ";
for (let i = 0; i < SMALL_CAPS.length; i++) LOOSE.set(SMALL_CAPS.codePointAt(i)!, String.fromCharCode(97 + i));
// Letters a model reads as Latin although the table maps them elsewhere (ε → ɛ, η, п, г…).
const READ_AS_LATIN = "ʍmᴎnʜhɴnɑaαaεeɛeιiηnνvυuτtгrпnᴜuѵvɢgԍg";
for (let i = 0; i < READ_AS_LATIN.length; i += 2) LOOSE.set(READ_AS_LATIN.codePointAt(i)!, READ_AS_LATIN[i + 1]!);

const MARKS = /\p{M}/gu;
// Invisible characters, format characters and blanks that render as nothing (braille blank,
// Hangul fillers): a skeleton never contains them.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\u2800\u3164\u115F\u1160\uFFA0]/gu;

/**
 * The skeleton of `text`: compatibility-folded, diacritics and invisible characters removed,
 * every confusable character replaced by its prototype, lower-cased; `loose` also folds small
 * capitals. Two strings with the same
 * skeleton look alike. Costs a few hundred ns per short string; call it only off the fast path.
 */
export function confusableSkeleton(text: string, loose = false): string {
  const folded = text.normalize("NFKD").replace(MARKS, "").replace(INVISIBLE, "");
  return fold(fold(folded, loose).normalize("NFKD").replace(MARKS, ""), loose).toLowerCase();
}

/** As {@link confusableSkeleton} with diacritics kept: "mañana" is a name of its own, "mаnаnа" is not. */
function nameSkeleton(text: string): string {
  return fold(fold(text.normalize("NFKC").replace(INVISIBLE, ""), false), false).normalize("NFKC").toLowerCase();
}

// Two passes: a prototype may itself be a capital or small capital with its own entry.
function fold(text: string, loose: boolean): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    // ASCII maps to itself: the table's ASCII entries ("m" → "rn", "1" → "l") would turn honest
    // text into look-alikes of other honest text.
    // The loose folds win: for markers, how a model reads a letter matters more than the table.
    out += cp < 0x80 ? ch : ((loose ? LOOSE.get(cp) : undefined) ?? PROTOTYPE.get(cp) ?? ch);
  }
  return out;
}

const NON_ASCII = /[^\x00-\x7F]/;
const ASCII_ONLY = /^[\x00-\x7F]*$/;

/**
 * What a name that is not plain ASCII pretends to be: the ASCII name it looks like, or undefined
 * when it looks like nothing but itself ("иван", "小爱" and "alice" stay unmarked; "yоu" with a
 * Cyrillic о looks like "you").
 */
export function asciiLookalikeOf(name: string): string | undefined {
  if (!NON_ASCII.test(name)) return undefined;
  const skeleton = nameSkeleton(name);
  if (skeleton === "" || !ASCII_ONLY.test(skeleton)) return undefined;
  return skeleton === name.toLowerCase() ? undefined : skeleton;
}

/**
 * A key under which names that a reader could take for one another are equal: the skeleton with
 * small capitals folded and diacritics gone ("ṣam", "sạm", "sᴀm" → "sam"), then the ASCII
 * look-alikes folded too — rn/m, vv/w, 1/l/I/i/|, 0/o ("sarn", "a1ice", "b0b"). Coarser than a
 * skeleton on purpose: it is only compared with the few aids we know, never used to rewrite text.
 */
export function lookalikeKey(name: string): string {
  return confusableSkeleton(name, true).replace(/rn/g, "m").replace(/vv/g, "w").replace(/[1il|]/g, "l").replace(/0/g, "o");
}
