import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20000,
    hookTimeout: 20000,
    pool: "forks",
    setupFiles: ["test/support/dedup-ready.ts"],
    // vi.useFakeTimers() also fakes node:timers and node:timers/promises (src/util/wait.ts waits
    // through the latter): a test that owns the clock owns every timer.
    fakeTimers: { fakeNodeBuiltins: true },
  },
});
