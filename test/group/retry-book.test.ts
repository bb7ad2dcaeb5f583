import { describe, expect, it } from "vitest";
import { RetryBook } from "../../src/group/retry-book.ts";

describe("RetryBook", () => {
  const settings = { maxRetries: 2, retryBackoffMs: 1000 };

  it("counts tries per message: a late joiner keeps its own retries", () => {
    const book = new RetryBook<{ id: string }>();
    const a = { id: "a" };
    const b = { id: "b" };
    expect(book.failed([a], settings)).toEqual({ again: [a], exhausted: [], retryInMs: 1000 });
    expect(book.attemptOf([a, b])).toBe(1);
    expect(book.failed([a, b], settings)).toEqual({ again: [a, b], exhausted: [], retryInMs: 2000 });
    // a has had 3 tries (1 + maxRetries): out; b has had 2.
    expect(book.failed([a, b], settings)).toEqual({ again: [b], exhausted: [a], retryInMs: 4000 });
    expect(book.failed([b], settings)).toEqual({ again: [], exhausted: [b], retryInMs: null });
  });

  it("a success resets the backoff, not the messages' tries", () => {
    const book = new RetryBook<{ id: string }>();
    const a = { id: "a" };
    book.failed([a], settings);
    book.failed([a], settings);
    book.succeeded();
    const c = { id: "c" };
    expect(book.failed([c], settings).retryInMs).toBe(1000);
    expect(book.attemptOf([a, c])).toBe(2);
  });
});
