// What a line's opening words say, beyond its first name (../addressee.ts reads that): the text
// after its first word, where a second-word address starts (`lol bob …`, `thanks bob`). Pure.

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
