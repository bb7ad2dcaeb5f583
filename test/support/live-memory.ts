// For the memory tests' children (run with --expose-gc): what is still live after a full garbage
// collection, V8's heap in use and the typed arrays' memory outside it, in MB.
export function liveMb(): number {
  (globalThis as { gc?: () => void }).gc!();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 1024 / 1024;
}

/** `lines()` as an iterable whose every walk, at its end, notes what is live; `peakMb()`: the most noted. */
export function notingLive<T>(lines: () => Iterable<T>): { walked: Iterable<T>; peakMb(): number } {
  let peak = 0;
  return {
    walked: {
      *[Symbol.iterator]() {
        yield* lines();
        peak = Math.max(peak, liveMb());
      },
    },
    peakMb: () => peak,
  };
}

/** Prints a child's figures as JSON, MB to one decimal. */
export function printFigures(figures: Record<string, number>): void {
  const round = (x: number) => Math.round(x * 10) / 10;
  process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, k.endsWith("Mb") ? round(v) : v]))));
}
