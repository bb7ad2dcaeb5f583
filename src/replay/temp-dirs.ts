// The temp folders a replay writes (sorted runs of a log out of order, spilled dispatches and
// drops): removed by their owner when it is done, and also when the process is stopped by SIGINT
// or SIGTERM, or exits, before that — a stopped replay of a large log leaves no copy of it behind.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const live = new Set<string>();
const SIGNALS = ["SIGINT", "SIGTERM"] as const;

function removeAll(): void {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
  live.clear();
}

/** Removes the folders, then lets the signal do what it would have done without this listener. */
function onSignal(signal: NodeJS.Signals): void {
  removeAll();
  uninstall();
  process.kill(process.pid, signal);
}

function install(): void {
  process.on("exit", removeAll);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function uninstall(): void {
  process.off("exit", removeAll);
  for (const s of SIGNALS) process.off(s, onSignal);
}

/** A fresh folder (0700) under the system's temp folder, named `prefix…`. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (live.size === 0) install();
  live.add(dir);
  return dir;
}

/** Removes a folder from {@link makeTempDir}. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  if (!live.delete(dir)) return;
  if (live.size === 0) uninstall();
}
