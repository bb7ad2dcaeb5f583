// The conformance kit's retry on the witness's own key defect: only that defect (an SDK process
// that printed 私钥解密失败) starts the scenario again, at most three times, each after the failed
// attempt is undone; any other failure is thrown at once.
import { describe, expect, it, vi } from "vitest";
import { retryOnSdkKeyDefect, SDK_KEY_DEFECT } from "./kit.ts";

describe("retryOnSdkKeyDefect", () => {
  it("runs the scenario again after the SDK's key defect, undoing the failed attempt first", async () => {
    const log: string[] = [];
    let out = "";
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    await retryOnSdkKeyDefect(
      async (n) => {
        log.push(`attempt ${n}`);
        if (n === 1) {
          out = `[2026/11/27 06:11:09] ${SDK_KEY_DEFECT}: malformed PBES2 format`;
          throw new Error("sdk-dm FAIL");
        }
      },
      () => out,
      () => {
        log.push("reset");
        out = "";
      },
    );
    expect(log).toEqual(["attempt 1", "reset", "attempt 2"]);
    expect(String(stderr.mock.calls[0]?.[0])).toContain("WITNESS DEFECT (attempt 1 of 3)");
    stderr.mockRestore();
  });

  it("throws any other failure at once", async () => {
    const attempts: number[] = [];
    await expect(
      retryOnSdkKeyDefect(
        async (n) => {
          attempts.push(n);
          throw new Error("dave did not answer");
        },
        () => "sdk: FAIL: no answer",
        () => undefined,
      ),
    ).rejects.toThrow("dave did not answer");
    expect(attempts).toEqual([1]);
  });

  it("gives up after the third attempt with the defect, throwing its failure", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const attempts: number[] = [];
    await expect(
      retryOnSdkKeyDefect(
        async (n) => {
          attempts.push(n);
          throw new Error(`failed ${n}`);
        },
        () => SDK_KEY_DEFECT,
        () => undefined,
      ),
    ).rejects.toThrow("failed 3");
    expect(attempts).toEqual([1, 2, 3]);
    stderr.mockRestore();
  });
});
