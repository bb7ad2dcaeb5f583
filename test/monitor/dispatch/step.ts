// One dispatch step at a time: the real monitor wiring (createMonitorContext), a batch built by
// hand, the group it reads (a real GroupMemory) and a DispatchRun over them — so a test names a
// step's input and asserts its output or skip reason, without the rest of the pipeline.
import { createScriptedBackend } from "../../../src/backends/deterministic.ts";
import { createMemoryLogger } from "../../../src/log.ts";
import type { DispatchDecision } from "../../../src/monitor/decision.ts";
import { createMonitorContext } from "../../../src/monitor/monitor.ts";
import { DispatchRun } from "../../../src/monitor/dispatch/run.ts";
import type { AgentBackend, DispatchBatch, PersistedGroupState } from "../../../src/types.ts";
import { ALICE, recordingSender, settingsWith, testGroup } from "../helpers.ts";

export function stepRun(p: {
  batch: DispatchBatch;
  settings?: Record<string, unknown>;
  backend?: AgentBackend;
  /** Config `agents` (everyone else unknown; the owner carol a person). */
  agents?: string[];
  humans?: string[];
  random?: () => number;
  restored?: Partial<PersistedGroupState>;
  group?: ReturnType<typeof testGroup>;
}) {
  const logger = createMemoryLogger();
  const sender = recordingSender(() => Date.now());
  const backend = p.backend ?? createScriptedBackend({ mode: "always", replyText: "Sounds good." });
  const decisions: DispatchDecision[] = [];
  const m = createMonitorContext({
    identityId: "alice",
    identity: ALICE,
    groupId: "g1",
    settings: settingsWith(p.settings),
    humans: p.humans ?? [],
    agents: p.agents ?? [],
    backend,
    sender,
    logger,
    random: p.random ?? (() => 0),
    clock: { now: () => Date.now() },
    ...(p.restored ? { restored: p.restored } : {}),
    onDecision: (d) => decisions.push(d),
  });
  const group = p.group ?? testGroup();
  const run = new DispatchRun(m, p.batch, group.context);
  return { m, run, group, sender, backend, logger, decisions };
}
