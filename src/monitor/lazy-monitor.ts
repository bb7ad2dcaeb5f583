// A group's monitor built on first use. A large identity has many quiet groups: until a group
// dispatches (or its state is read for a save), it holds its parameters only, not the dispatch
// machinery — about 1.5 KB less per idle group. Behaviour is the monitor's own from the first call.
import { createGroupMonitor, type GroupMonitor, type MonitorParams } from "./monitor.ts";

export function createLazyGroupMonitor(params: MonitorParams): GroupMonitor {
  let monitor: GroupMonitor | undefined;
  let closed = false;
  const real = (): GroupMonitor => {
    if (!monitor) {
      monitor = createGroupMonitor(params);
      // Closed before first use: the monitor refuses dispatches as "group-closed", as it would have.
      if (closed) monitor.close();
    }
    return monitor;
  };
  return {
    handle: (batch, group) => real().handle(batch, group),
    snapshot: () => real().snapshot(),
    buildPrompt: (batch, memory) => real().buildPrompt(batch, memory),
    close() {
      closed = true;
      monitor?.close();
    },
  };
}
