// What a line's opening words say, beyond its first name (../addressee.ts reads that): the text
// after its first word, where a second-word address starts (`lol bob …`, `thanks bob`), and
// whether the opening is an address beyond doubt (`bob: …`, `@bob …`) whoever bob is. Pure.
import { leadingName } from "../addressee.ts";

/**
 * The text after the line's first word and the spaces and punctuation that follow it, or null
 * when the line has one word. `lol bob, try xkill` → `bob, try xkill`; `thanks bob` → `bob`.
 */
export function afterFirstWord(content: string): string | null {
  let i = 0;
  const n = content.length;
  while (i < n && isSpace(content[i] as string)) i++;
  while (i < n && !isSpace(content[i] as string)) i++;
  while (i < n && isSpace(content[i] as string)) i++;
  return i < n ? content.slice(i) : null;
}

function isSpace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\u3000";
}

/**
 * The line opens with an address marked beyond doubt — `@bob …`, or a name followed by a colon
 * (`bob: …`, `bob：…`) — to anyone, known or not (a typo, someone who has not spoken). A comma
 * is not enough: `yes, …` and `well, …` open with a word, not an address.
 */
export function opensWithStrongAddress(content: string): boolean {
  const lead = leadingName(content);
  if (lead === null) return false;
  const t = content.trimStart();
  if (t.startsWith("@")) return true;
  const next = t[lead.name.length];
  return next === ":" || next === "：";
}
