import { describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/monitor/token-estimate.ts";

describe("estimateTokens", () => {
  it("counts ~4 Latin chars per token and one per CJK char", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("abcdefgh")).toBe(2);
    expect(estimateTokens("abcdefghi")).toBe(3);
    expect(estimateTokens("你好世界")).toBe(4);
    expect(estimateTokens("hi 你好")).toBe(3);
  });
});
