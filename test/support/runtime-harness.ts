// End-to-end harness for the composition root: the real group service `group.acp.local` reached
// through the in-memory loopback network (test/support/loopback.ts), a config built through the
// real schema, identities started with `startIdentity` (each on its own loopback link) whose
// decisions and group-client events are recorded, and waits for events (wait-for.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { parseChannelConfig } from "../../src/config/load.ts";
import type { ChannelConfigInput, GroupOverrides } from "../../src/config/schema.ts";
import type { GroupClientEvent } from "../../src/group/group-client.ts";
import type { DispatchDecision } from "../../src/monitor/monitor.ts";
import { startIdentity, type RunningIdentity, type StartIdentityParams } from "../../src/runtime/identity.ts";
import { createGroupService, type GroupService, type GroupServiceOptions } from "../../src/server/group-service.ts";
import type { ChannelConfig, GroupMessage } from "../../src/types.ts";
import { createLoopback, type Loopback } from "./loopback.ts";
import { waitFor } from "./wait-for.ts";

export const GROUP = "lobby";
export const DOMAIN = "acp.local";
export const HUMAN = "you.acp.local";

export const AGENTS = {
  alice: { aid: "alice.acp.local", name: "Alice" },
  bob: { aid: "bob.acp.local", name: "Bob" },
  carol: { aid: "carol.acp.local", name: "Carol" },
} as const;
export type AgentName = keyof typeof AGENTS;

/** Budgets no test reaches, so only the gate under test can stop a reply. */
const GENEROUS_WINDOWS = {
  "5m": { messages: 1000, tokens: 100_000_000 },
  "3h": { messages: 10_000, tokens: 1_000_000_000 },
  "24h": { messages: 100_000, tokens: 1_000_000_000 },
};
// Generous: no window and no pace (budget.unaddressedEvery) holds a test back.
export const GENEROUS_BUDGET = { addressed: GENEROUS_WINDOWS, unaddressed: GENEROUS_WINDOWS, orphan: GENEROUS_WINDOWS, unaddressedEvery: 0 };

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `acp-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RuntimeFixture<I extends RunningIdentity = RecordedIdentity> {
  /** The group service the current test started, if any. */
  server: GroupService | undefined;
  /** The identities the current test tracked, in the order it started them. */
  readonly running: readonly I[];
  /** Tracks an identity so it is closed after the test; returns it. */
  track<T extends I>(identity: T): T;
  /** A fresh temp state directory, removed after the test. */
  stateDir(prefix?: string): string;
}

/**
 * The per-test fixture of the runtime tests: registers an `afterEach` that closes every tracked
 * identity, then the server, then removes the temp dirs. Call it once, at the top of a test file.
 */
export function useRuntimeFixture<I extends RunningIdentity = RecordedIdentity>(defaultPrefix: string): RuntimeFixture<I> {
  let running: I[] = [];
  let dirs: Array<{ remove(): void }> = [];
  const fixture: RuntimeFixture<I> = {
    server: undefined,
    get running() {
      return running;
    },
    track(identity) {
      running.push(identity);
      return identity;
    },
    stateDir(prefix = defaultPrefix) {
      const d = tempDir(prefix);
      dirs.push(d);
      return d.dir;
    },
  };
  afterEach(async () => {
    await Promise.all(running.map((r) => r.close()));
    currentNet = undefined;
    for (const d of dirs) d.remove();
    fixture.server = undefined;
    running = [];
    dirs = [];
  });
  return fixture;
}

/** The loopback network of the current test: created by the first serveGroups, reset after each test. */
let currentNet: Loopback | undefined;

export function currentNetwork(): Loopback {
  if (!currentNet) throw new Error("serveGroups() first");
  return currentNet;
}

/**
 * The group service `group.acp.local` on the test's loopback network. Called again, it replaces
 * the running one like a restart: every session drops and comes back to the new service.
 */
export function serveGroups(options: Omit<GroupServiceOptions, "domain">): GroupService {
  const service = createGroupService({ domain: DOMAIN, ...options });
  if (currentNet) currentNet.setService(service);
  else currentNet = createLoopback([service]);
  return service;
}

/** The group service with the given agents and the human as members; no rate limit. */
export async function startLobbyServer(agents: readonly AgentName[], opts: Pick<GroupServiceOptions, "historyFile" | "history"> = {}): Promise<GroupService> {
  const members: Record<string, { human?: boolean }> = { [HUMAN]: { human: true } };
  for (const a of agents) members[AGENTS[a].aid] = {};
  return serveGroups({ groups: { [GROUP]: { members } }, rateLimit: null, ...opts });
}

/** A validated config: the agents, the human, and `lobby` with the given settings. */
export function lobbyConfig(p: {
  stateDir: string;
  agents: readonly AgentName[];
  lobby: GroupOverrides;
}): ChannelConfig {
  const identities: NonNullable<ChannelConfigInput["identities"]> = {};
  for (const a of p.agents) identities[a] = { ...AGENTS[a] };
  return parseChannelConfig({
    stateDir: p.stateDir,
    humans: [HUMAN],
    identities,
    groups: { [GROUP]: p.lobby },
  });
}

export type RecordedIdentity = RunningIdentity & {
  decisions: DispatchDecision[];
  events: GroupClientEvent[];
};

/** `startIdentity` with every decision and group-client event recorded, on a loopback link of its own. */
/** `startIdentity` with every decision and group-client event recorded (and handed on to `onGroupEvent`, if given). */
export function startRecorded(p: Omit<StartIdentityParams, "onDecision">): RecordedIdentity {
  const decisions: DispatchDecision[] = [];
  const events: GroupClientEvent[] = [];
  const aid = p.config.identities[p.identityId]?.aid;
  const running = startIdentity({
    ...(aid && !p.link && !p.connect ? { link: currentNetwork().link(aid) } : {}),
    ...p,
    // Tests close explicitly; a heartbeat would only add traffic.
    connection: { heartbeatMs: 0, reconnect: { baseMs: 50, maxMs: 200, jitter: 0 }, ...p.connection },
    onDecision: (d) => decisions.push(d),
    onGroupEvent: (g, e) => {
      events.push(e);
      p.onGroupEvent?.(g, e);
    },
  });
  return Object.assign(running, { decisions, events });
}

export { waitFor };

/**
 * What keeps `r` from being settled in the group, or [] when it is settled: every message of the
 * group's history has reached its client (the feed has fed up to the newest id), nothing is held
 * and no dispatch runs. A settled identity says nothing more until a new message arrives (every
 * dispatch starts from something held), so this is the event that proves a quiet group quiet.
 */
export function unsettled(server: GroupService, r: RunningIdentity, groupId = GROUP): string[] {
  const newest = Math.max(0, ...server.history(groupId).map((m) => Number(m.msgId)));
  const fed = r.connectionFor(groupId)?.lastFed(groupId) ?? 0;
  const s = r.groupClient(groupId)?.stats();
  const out: string[] = [];
  if (fed < newest) out.push(`${r.aid}: fed up to #${fed} of #${newest}`);
  if (s === undefined) out.push(`${r.aid}: no client for ${groupId}`);
  else {
    if (s.held > 0) out.push(`${r.aid}: ${s.held} held`);
    if (s.dispatching) out.push(`${r.aid}: dispatching`);
  }
  return out;
}

/** Waits until every identity is settled in the group (see {@link unsettled}): nothing more will be said. */
export async function settle(server: GroupService, identities: readonly RunningIdentity[], timeoutMs = 8000): Promise<void> {
  await waitFor(() => identities.every((r) => unsettled(server, r).length === 0), () => `the group to settle: ${identities.flatMap((r) => unsettled(server, r)).join("; ")}`, timeoutMs);
}

/** Message ids of every dispatch that completed (sent or silent), in dispatch order. */
export function dispatchedIds(r: RecordedIdentity): string[] {
  const batches = new Map<number, string[]>();
  const out: string[] = [];
  for (const e of r.events) {
    if (e.type === "dispatch-start") batches.set(e.batch.dispatchId, e.batch.messages.map((m) => m.msgId));
    if (e.type === "dispatch-end" && e.ok) out.push(...(batches.get(e.dispatchId) ?? []));
  }
  return out;
}

export const senders = (history: readonly GroupMessage[]) => history.map((m) => m.sender);
