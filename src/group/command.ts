// A bot command in a chat line: `!name …`, optionally pointed at someone (`!name | nick`,
// `!name > nick`), the way chat bots (IRC factoid bots and their likes) are asked. Pure.

export interface BotCommand {
  name: string;
  /** Whom the answer is for, as written (`puff` in `!sound | puff`); null for the room. */
  target: string | null;
}

const COMMAND = /^\s*!([A-Za-z][\w.+-]*)/;
const TARGET = /[|>]\s*@?([^\s|>,:;]+)\s*$/;

/** The command a line opens with, or null when it is not one. */
export function parseBotCommand(content: string): BotCommand | null {
  const m = COMMAND.exec(content);
  if (m === null) return null;
  const t = TARGET.exec(content.slice(m[0].length));
  return { name: m[1]!.toLowerCase(), target: t === null ? null : t[1]! };
}
