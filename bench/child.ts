// Talking to a benchmark's child process (a server or a flood in a process of its own, so its
// memory is its own): one question over IPC, one answer.
import type { ChildProcess } from "node:child_process";

/** Sends `msg` (none when undefined: only waits) and resolves with the first message `pick` accepts. */
export function ask<T>(child: ChildProcess, msg: unknown, pick: (m: Record<string, unknown>) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (!pick(m)) return;
      child.off("message", on);
      resolve(m as T);
    };
    child.on("message", on);
    if (msg !== undefined) child.send(msg as string);
  });
}
