// Whether a line speaks to someone in the second person: "you", "your", "u" … — how a person
// answering someone's line talks to them, in any chat. Pure; one short list, read as whole words.

/**
 * Second-person forms, as whole words (case-insensitive): English (the nine dev logs are English:
 * only these were measured), German, French, Spanish, Portuguese, Italian and Russian, and the
 * Chinese, Japanese and Korean pronouns (matched anywhere: those scripts do not space words).
 * Short and unambiguous on purpose: forms that are also common other words (`ihr`, `te`, `ti`,
 * `vos`) are left out.
 */
const SECOND_PERSON =
  /(?:^|[^\p{L}\p{N}_'])(?:you|your|yours|yourself|you're|youre|u|ur|du|dich|dir|dein|deine|deinen|euch|tu|toi|vous|votre|usted|ustedes|você|vocês|ты|тебя|тебе|вы|вас|вам)(?=$|[^\p{L}\p{N}_'])|[你您]|あなた|당신/iu;

/** The line addresses someone in the second person. */
export function inSecondPerson(content: string): boolean {
  return SECOND_PERSON.test(content);
}
