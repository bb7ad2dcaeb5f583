// Direct conversations without sockets: an in-memory network of DirectLinks (each send is
// delivered to the peer's listeners as a microtask, like I/O; a link can be taken down), an
// in-memory state store, and one identity's direct runtime on it — the real conversations,
// monitors and pipeline, on whatever clock the test owns. Only the model is scripted.
import { createScriptedBackend, type ScriptedBackend } from "../../src/backends/deterministic.ts";
import { parseChannelConfig } from "../../src/config/load.ts";
import { createMemoryLogger } from "../../src/log.ts";
import { MemberDirectory } from "../../src/members/member-types.ts";
import type { DispatchDecision } from "../../src/monitor/monitor.ts";
import type { DirectLink, DirectMessage } from "../../src/network/direct-link.ts";
import { NetworkError } from "../../src/network/errors.ts";
import { createDirectRuntime, type DirectOptions, type DirectRuntime } from "../../src/runtime/direct.ts";
import type { StateStore } from "../../src/state/file-store.ts";
import type { ChannelConfigInput } from "../../src/config/schema.ts";
import type { PersistedDirectState } from "../../src/state/direct-state.ts";

export interface Wire {
  at: number;
  from: string;
  to: string;
  text: string;
  sessionId: string;
}

export interface MemoryNet {
  link(aid: string): DirectLink & { up: boolean; sent: Wire[] };
  /** Delivers the last message `to` received once more (a duplicate frame). False when there was none. */
  redeliverLast(to: string): boolean;
  /** Every line that crossed the network, in order. */
  readonly wire: Wire[];
}

/** Links between aids in one process; a send to an aid with no link (or a link that is down) is refused as the service would. */
export function memoryNet(now: () => number = Date.now): MemoryNet {
  const listeners = new Map<string, Set<(m: DirectMessage) => void>>();
  const wire: Wire[] = [];
  const links = new Map<string, DirectLink & { up: boolean; sent: Wire[] }>();
  let seq = 0;
  let sessions = 0;
  const sessionOf = new Map<string, string>();
  const pair = (a: string, b: string) => [a, b].sort().join("|");
  const lastTo = new Map<string, DirectMessage>();
  return {
    wire,
    redeliverLast(to) {
      const m = lastTo.get(to);
      if (!m) return false;
      queueMicrotask(() => {
        for (const l of [...(listeners.get(to) ?? [])]) l(m);
      });
      return true;
    },
    link(aid) {
      const existing = links.get(aid);
      if (existing) return existing;
      const set = new Set<(m: DirectMessage) => void>();
      listeners.set(aid, set);
      const sent: Wire[] = [];
      const link = {
        aid,
        up: true,
        sent,
        onDirect(l: (m: DirectMessage) => void) {
          set.add(l);
          return () => set.delete(l);
        },
        async sendDirect(p: { peer: string; text: string; sessionId?: string | undefined }) {
          if (!link.up) throw new NetworkError("NOT_CONNECTED", `${aid}: link down`, { aid });
          const to = links.get(p.peer);
          if (!to?.up) throw new NetworkError("BAD_REPLY", `${p.peer} could not be invited: invite_agent_ack 404`, { aid });
          const key = pair(aid, p.peer);
          const sessionId = p.sessionId ?? sessionOf.get(key) ?? `s${++sessions}`;
          sessionOf.set(key, sessionId);
          const w: Wire = { at: now(), from: aid, to: p.peer, text: p.text, sessionId };
          wire.push(w);
          sent.push(w);
          const m: DirectMessage = { peer: aid, sessionId, messageId: String(++seq), text: p.text, at: now(), payload: p.text };
          lastTo.set(p.peer, m);
          queueMicrotask(() => {
            for (const l of [...(listeners.get(p.peer) ?? [])]) l(m);
          });
          return { sessionId };
        },
      };
      links.set(aid, link);
      return link;
    },
  };
}

export function memoryStore(): StateStore & { direct: Map<string, PersistedDirectState>; saves: number } {
  const direct = new Map<string, PersistedDirectState>();
  const store = {
    dir: "/nowhere",
    direct,
    saves: 0,
    loadGroup: () => undefined,
    saveGroup: () => {},
    loadConversation: () => undefined,
    saveConversation: () => {},
    loadDirect: (id: string) => structuredClone(direct.get(id)),
    saveDirect: (id: string, s: PersistedDirectState) => {
      store.saves++;
      direct.set(id, structuredClone(s));
    },
  };
  return store;
}

/** Replies different enough that the near-duplicate check lets each one through. */
const PHRASES = [
  "the build passes on my side.",
  "Which branch are you on?",
  "Tuesday works, 10 am.",
  "I'd rather measure first; numbers beat guesses.",
  "Grapefruit, lemon, lime.",
  "Zero bugs found in 47 files!",
  "Quick question: who owns the release?",
  "OK — closing my laptop now.",
];

export interface Agent {
  aid: string;
  runtime: DirectRuntime;
  backend: ScriptedBackend;
  decisions: DispatchDecision[];
  logger: ReturnType<typeof createMemoryLogger>;
  link: ReturnType<MemoryNet["link"]>;
}

/** One identity's direct runtime on `net`: `name.acp.local`, owned by `owner`, answering every line (with `reply`) after `latencyMs`. */
export function directAgent(p: {
  net: MemoryNet;
  name: string;
  owner?: string;
  store?: StateStore;
  identity?: Record<string, unknown>;
  humans?: string[];
  config?: Partial<ChannelConfigInput>;
  latencyMs?: number;
  reply?: (n: number, text: string) => string;
  options?: DirectOptions;
  /** Instead of the net's own link for the aid (a test's wrapper around it). */
  link?: ReturnType<MemoryNet["link"]>;
}): Agent {
  const aid = `${p.name}.acp.local`;
  const config = parseChannelConfig({
    humans: p.humans ?? [],
    identities: { [p.name]: { aid, ...(p.owner ? { owner: p.owner } : {}), ...p.identity } },
    ...p.config,
  });
  let n = 0;
  const backend = createScriptedBackend({
    mode: "always",
    latencyMs: p.latencyMs ?? 0,
    replyText: (req) => (p.reply ?? ((k) => `${p.name} #${k}: ${PHRASES[(k - 1) % PHRASES.length]}`))(++n, req.messages.at(-1)?.content ?? ""),
  });
  const logger = createMemoryLogger();
  const decisions: DispatchDecision[] = [];
  const link = p.link ?? p.net.link(aid);
  const identity = config.identities[p.name]!;
  const runtime = createDirectRuntime({
    config,
    identityId: p.name,
    identity,
    link,
    store: p.store ?? memoryStore(),
    logger,
    backend,
    memberTypes: new MemberDirectory({ humans: config.humans, owner: identity.owner }),
    noteSender: () => {},
    random: () => 0.5,
    onDecision: (d) => decisions.push(d),
    options: p.options,
    stateDir: "/nowhere",
  });
  return { aid, runtime, backend, decisions, logger, link };
}

export const outcomes = (a: Agent) => a.decisions.map((d) => (d.outcome.kind === "sent" ? "sent" : d.outcome.reason));
export const events = (a: Agent, event: string) => a.logger.entries.filter((e) => e.event === event).map((e) => e.fields);
