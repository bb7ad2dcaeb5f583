// Second-person forms, as the second-person rule reads them: whole words in the spaced scripts,
// the pronoun anywhere in Chinese, Japanese and Korean.
import { describe, expect, it } from "vitest";
import { inSecondPerson } from "../../../src/group/addressing/second-person.ts";

describe("inSecondPerson", () => {
  it.each([
    "why would you need that?",
    "You need HOST too",
    "can u paste it",
    "is that your line?",
    "you're right",
    "kannst du das pasten?",
    "as-tu essayé ?",
    "¿usted probó?",
    "você tentou?",
    "ты пробовал?",
    "你试过重启吗",
    "あなたは試しましたか",
  ])("%j: second person", (content) => {
    expect(inSecondPerson(content)).toBe(true);
  });

  it.each(["youth and bayou", "that is the command", "menu option", "Uber", "I'd use gftp", "ihr Name", ""])("%j: not", (content) => {
    expect(inSecondPerson(content)).toBe(false);
  });
});
