// An in-memory network for the group layer's tests: AgentLinks whose PeerChannels reach
// ServiceAgents (the real group service) without sockets or certificates. Deliveries are queued
// as microtasks, like I/O, so nothing re-enters the sender. A "drop" ends every session of an
// aid like a dropped socket (down, onSessionEnd) and, unless told otherwise, brings up a fresh
// session, as the network layer does after it signs in again.
import type { AgentLink, PeerChannel, PeerChannelEvents, PeerChannelStatus } from "../../src/network/peer-channel.ts";
import type { ServiceAgent } from "../../src/server/service-agent.ts";

type Listeners = { [E in keyof PeerChannelEvents]: Set<(p: PeerChannelEvents[E]) => void> };

export interface LoopbackChannel extends PeerChannel {
  readonly aid: string;
  /** Payloads this channel sent, in order. */
  readonly sent: string[];
  /** Delivers a payload to the client as if the peer sent it on the current session. */
  inject(payload: string): void;
  /** Reasons given to `renew`, in order (each brought a new session). */
  readonly renewals: readonly string[];
}

export interface LoopbackLink extends AgentLink {
  channel(peer: string): LoopbackChannel;
  readonly channels: ReadonlyMap<string, LoopbackChannel>;
  close(): void;
}

export interface Loopback {
  link(aid: string): LoopbackLink;
  /** Ends the sessions of `aid` (or everyone's); a new session comes up unless `reconnect` is false. */
  drop(aid?: string, options?: { reconnect?: boolean }): void;
  /** Brings up a session on every channel that is down (after drop with reconnect false). */
  restore(aid?: string): void;
  /** Replaces (or adds) a service agent: the old one's sessions drop and come back to the new one. */
  setService(agent: ServiceAgent): void;
  /** Return "drop" to lose a client → service payload (it never arrives). */
  filter: ((from: string, peer: string, payload: string) => "drop" | undefined) | undefined;
  /** Sessions created so far. */
  readonly sessionsCreated: number;
}

export function createLoopback(services: readonly ServiceAgent[]): Loopback {
  const agents = new Map<string, ServiceAgent>();
  const channels: Array<Chan> = [];
  let sessionSeq = 0;

  class Chan implements LoopbackChannel {
    readonly aid: string;
    readonly peer: string;
    readonly sent: string[] = [];
    status: PeerChannelStatus = "connecting";
    sessionId: string | undefined;
    readonly #listeners: Listeners = { up: new Set(), down: new Set(), message: new Set() };

    constructor(aid: string, peer: string) {
      this.aid = aid;
      this.peer = peer;
    }

    send(payload: string): boolean {
      if (this.status !== "up" || this.sessionId === undefined) return false;
      this.sent.push(payload);
      const sessionId = this.sessionId;
      if (loopback.filter?.(this.aid, this.peer, payload) === "drop") return true;
      queueMicrotask(() => {
        // A payload in flight when its session ended is lost, like bytes on a dead socket.
        if (this.sessionId !== sessionId) return;
        agents.get(this.peer)?.onMessage({ sessionId, from: this.aid, payload });
      });
      return true;
    }

    on<E extends keyof PeerChannelEvents>(event: E, listener: (p: PeerChannelEvents[E]) => void): () => void {
      (this.#listeners[event] as Set<typeof listener>).add(listener);
      return () => (this.#listeners[event] as Set<typeof listener>).delete(listener);
    }

    emit<E extends keyof PeerChannelEvents>(event: E, payload: PeerChannelEvents[E]): void {
      for (const l of [...(this.#listeners[event] as Set<(p: PeerChannelEvents[E]) => void>)]) l(payload);
    }

    inject(payload: string): void {
      const sessionId = this.sessionId;
      if (sessionId === undefined) return;
      queueMicrotask(() => {
        if (this.sessionId === sessionId) this.emit("message", { payload, sessionId });
      });
    }

    up(reconnect: boolean): void {
      if (this.status === "closed" || this.status === "up" || !agents.has(this.peer)) return;
      this.sessionId = `s${++sessionSeq}`;
      this.status = "up";
      this.emit("up", { sessionId: this.sessionId, reconnect });
    }

    down(reason: string): void {
      if (this.status !== "up") return;
      const sessionId = this.sessionId!;
      this.status = "down";
      this.sessionId = undefined;
      agents.get(this.peer)?.onSessionEnd({ sessionId, from: this.aid });
      this.emit("down", { reason });
    }

    /** Renewed sessions, with the reason each was given. */
    readonly renewals: string[] = [];

    renew(reason: string): void {
      if (this.status !== "up") return;
      this.renewals.push(reason);
      this.down(reason);
      this.up(true);
    }

    close(): void {
      if (this.status === "closed") return;
      this.down("closed");
      this.status = "closed";
    }
  }

  const attach = (agent: ServiceAgent) => {
    agents.set(agent.aid, agent);
    agent.attach({
      send({ sessionId, to, payload }) {
        const chan = channels.find((c) => c.aid === to && c.peer === agent.aid && c.sessionId === sessionId && c.status === "up");
        if (!chan) return false;
        queueMicrotask(() => {
          if (chan.sessionId === sessionId && agents.get(agent.aid) === agent) chan.emit("message", { payload, sessionId });
        });
        return true;
      },
    });
  };
  for (const s of services) attach(s);

  const loopback: Loopback = {
    filter: undefined,
    get sessionsCreated() {
      return sessionSeq;
    },
    link(aid) {
      const mine = new Map<string, Chan>();
      return {
        aid,
        channels: mine,
        channel(peer) {
          let chan = mine.get(peer);
          if (!chan || chan.status === "closed") {
            const created = new Chan(aid, peer);
            chan = created;
            mine.set(peer, created);
            channels.push(created);
            queueMicrotask(() => created.up(false));
          }
          return chan;
        },
        close() {
          for (const c of mine.values()) c.close();
        },
      };
    },
    drop(aid, options = {}) {
      const hit = channels.filter((c) => (aid === undefined || c.aid === aid) && c.status === "up");
      for (const c of hit) c.down("socket dropped");
      if (options.reconnect !== false) queueMicrotask(() => hit.forEach((c) => c.up(true)));
    },
    restore(aid) {
      for (const c of channels) if ((aid === undefined || c.aid === aid) && c.status === "down") c.up(true);
    },
    setService(agent) {
      const hit = channels.filter((c) => c.peer === agent.aid && c.status === "up");
      for (const c of hit) c.down("service restarted");
      attach(agent);
      queueMicrotask(() => {
        for (const c of channels) if (c.peer === agent.aid && (c.status === "down" || c.status === "connecting")) c.up(true);
      });
    },
  };
  return loopback;
}
