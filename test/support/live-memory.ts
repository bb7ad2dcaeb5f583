// For the memory tests' children (run with --expose-gc): what is still live after a full garbage
// collection, V8's heap in use and the typed arrays' memory outside it, in MB.
export function liveMb(): number {
  (globalThis as { gc?: () => void }).gc!();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 1024 / 1024;
}
