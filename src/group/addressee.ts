// Who a line opens by addressing. Chat people put the addressee first — `bob: …`, `bob, …`,
// `@bob …`, or in IRC style just `bob …` — and often drop a nick's trailing `_`/`-` (`jacob:` for
// `jacob_`). Pure: the group client asks it whether a line is ours or meant for another member.

/** Nick comparison key: lower-cased, leading `@` and trailing `_`, `-`, `` ` `` and `|` dropped. */
export function nickKey(name: string): string {
  let end = name.length;
  while (end > 0 && "_-`|".includes(name[end - 1] as string)) end--;
  const start = name.startsWith("@") ? 1 : 0;
  return name.slice(start, end).toLowerCase();
}

/** The keys a member answers to: the nick, and for an aid (`bob.agentcp.io`) also its user part. */
export function memberKeys(sender: string): string[] {
  const full = nickKey(sender);
  const dot = sender.indexOf(".");
  return dot > 0 ? [full, nickKey(sender.slice(0, dot))] : [full];
}

/**
 * The name a line opens with, and whether it is marked as an address (`@bob`, `bob:`, `bob,`)
 * or bare (`bob …`, which counts only when bob is a known member). Null for an empty line or one
 * that opens with a non-name character.
 */
export function leadingName(content: string): { name: string; marked: boolean } | null {
  let i = 0;
  const n = content.length;
  while (i < n && (content[i] === " " || content[i] === "\t")) i++;
  let marked = false;
  if (content[i] === "@") {
    marked = true;
    i++;
  }
  const start = i;
  // IRC nick characters plus `.` for aids (`bob.agentcp.io:`). Stops at the first separator.
  while (i < n && isNickChar(content.charCodeAt(i), content[i] as string)) i++;
  let end = i;
  // `bob.` at a sentence end is `bob`, not an aid.
  while (end > start && content[end - 1] === ".") end--;
  if (end - start < 2) return null;
  const next = content[i];
  // ASCII and fullwidth (Chinese, Japanese) colon and comma.
  if (next === ":" || next === "," || next === "：" || next === "，" || next === "、") marked = true;
  else if (next !== undefined && next !== " " && next !== "\t" && !marked) return null;
  if (next === ":" && content[i + 1] === "/") return null; // `http://…`
  return { name: content.slice(start, end), marked };
}

const NON_ASCII_NICK = /[\p{L}\p{N}]/u;

function isNickChar(c: number, ch: string): boolean {
  if (c >= 128) return NON_ASCII_NICK.test(ch);
  // a-z A-Z 0-9 _ - [ ] \ ` ^ { } | .
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || "_-[]\\`^{}|.".includes(ch);
}

/** What a line's opening says about its addressee, given our own name keys and the known members. */
export type LeadingAddress =
  | { to: "us"; name: string }
  | { to: "other"; name: string }
  | { to: "none" };

/**
 * `selfKeys`: {@link nickKey}s of our own names (name, aid user part, aid, aliases). `isMember`:
 * whether a nick key belongs to someone else in this group, given whether the opening is marked
 * (`bob:`, `bob,`, `@bob`) or bare (`bob …`). A marked address to us counts even for a name
 * variant (`jacob:` for `jacob_`); an address to another needs that other to be a known member,
 * so `note: …` or `well, …` address nobody.
 */
export function classifyLeadingAddress(content: string, selfKeys: ReadonlySet<string>, isMember: (key: string, marked: boolean) => boolean): LeadingAddress {
  const lead = leadingName(content);
  if (lead === null) return { to: "none" };
  const key = nickKey(lead.name);
  if (key.length < 2) return { to: "none" };
  // A bare opening with our exact name is already a keyword mention; a bare variant (`guest …`
  // for `guest__`) is too often an ordinary word to count.
  if (selfKeys.has(key)) return lead.marked ? { to: "us", name: lead.name } : { to: "none" };
  if (isMember(key, lead.marked)) return { to: "other", name: lead.name };
  return { to: "none" };
}
