// The local network's presence server: the UDP side of `heartbeat_server`, as the SDKs meet it.
// The heartbeat sign-in (`/api/heartbeat/sign_in`, in access-point-api.ts) hands each aid a sign
// cookie and this server's address; heartbeats (513) carrying the aid's current cookie are
// answered with the next interval (258), any other cookie with 401 (sign in again). The last
// address an aid beat from is where an invite (259) goes. Bounded; no timers (freshness is
// judged on read with the server clock).
import { randomBytes } from "node:crypto";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import type { Logger } from "../../types.ts";
import { decodePresence, encodeHeartbeatAck, encodeInvite, NEXT_BEAT_SIGN_IN_AGAIN, type PresenceInvite } from "../../wire/presence.ts";

/** Aids tracked at once (cookies, addresses); past it the oldest goes. */
const MAX_TRACKED = 100_000;

export interface PresenceServerCounters {
  heartbeats: number;
  /** Heartbeats with an unknown or stale cookie, answered 401. */
  refusedHeartbeats: number;
  invitesSent: number;
  inviteAcks: number;
  /** Datagrams that parse as none of the four. */
  droppedDatagrams: number;
}

export interface PresenceServer {
  /** The UDP port heartbeats go to. */
  readonly port: number;
  /** The address sign-ins hand out (`server_ip`). */
  readonly host: string;
  /** A new sign cookie for `aid` (its previous one stops working). Safe integers only: the TypeScript SDK reads the cookie with parseInt. */
  issueCookie(aid: string): bigint;
  /** Did `aid` beat with its current cookie within `withinMs` (default three intervals)? */
  isOnline(aid: string, withinMs?: number): boolean;
  /** Sends `invite` to where `aid` last beat from; false when it never did (or not lately). */
  invite(aid: string, invite: PresenceInvite): boolean;
  counters(): Readonly<PresenceServerCounters>;
  close(): Promise<void>;
}

export async function startPresenceServer(p: {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Another port when `port` is taken (the HTTP port's number is only a preference). */
  anyPortIfTaken?: boolean;
  /** The interval heartbeat acks name. Default 5000 (what the SDKs beat at anyway). */
  nextBeatMs?: number;
  now: () => number;
  logger: Logger;
}): Promise<PresenceServer> {
  const nextBeatMs = p.nextBeatMs ?? 5000;
  const cookies = new Map<string, bigint>();
  const seen = new Map<string, { address: string; port: number; at: number }>();
  const counters: PresenceServerCounters = { heartbeats: 0, refusedHeartbeats: 0, invitesSent: 0, inviteAcks: 0, droppedDatagrams: 0 };
  let seq = 0;
  let closing: Promise<void> | undefined;
  const bounded = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_TRACKED) map.delete(map.keys().next().value as string);
  };

  const bind = (port: number) =>
    new Promise<Socket>((resolve, reject) => {
      const socket = createSocket("udp4");
      socket.once("error", reject);
      socket.bind(port, p.host, () => {
        socket.off("error", reject);
        resolve(socket);
      });
    });
  let socket: Socket;
  try {
    socket = await bind(p.port);
  } catch (err) {
    if (!p.anyPortIfTaken || p.port === 0) throw err;
    p.logger.log("info", "presence-server.port-taken", { port: p.port, note: "serving presence on another port" });
    socket = await bind(0);
  }
  socket.on("error", (err) => p.logger.log("warn", "presence-server.socket-error", { error: err.message }));

  socket.on("message", (msg: Buffer, from: RemoteInfo) => {
    const d = decodePresence(msg);
    if (!d) return void counters.droppedDatagrams++;
    if (d.kind === "heartbeat") {
      const key = d.aid.toLowerCase();
      const known = cookies.get(key);
      const ok = known !== undefined && known === d.cookie;
      if (ok) {
        counters.heartbeats++;
        bounded(seen, key, { address: from.address, port: from.port, at: p.now() });
      } else counters.refusedHeartbeats++;
      socket.send(encodeHeartbeatAck({ seq: ++seq, nextBeatMs: ok ? nextBeatMs : NEXT_BEAT_SIGN_IN_AGAIN }), from.port, from.address);
      return;
    }
    if (d.kind === "invite-ack") {
      if (cookies.get(d.aid.toLowerCase()) === d.cookie) counters.inviteAcks++;
      return;
    }
    counters.droppedDatagrams++;
  });

  const port = socket.address().port;
  p.logger.log("info", "presence-server.started", { host: p.host, port });
  return {
    port,
    host: p.host,
    issueCookie(aid) {
      // 48 random bits: well inside the safe integers the TypeScript SDK parses cookies into.
      const cookie = BigInt(`0x${randomBytes(6).toString("hex")}`) + 1n;
      bounded(cookies, aid.toLowerCase(), cookie);
      return cookie;
    },
    isOnline(aid, withinMs = 3 * nextBeatMs) {
      const s = seen.get(aid.toLowerCase());
      return s !== undefined && p.now() - s.at <= withinMs;
    },
    invite(aid, invite) {
      const s = seen.get(aid.toLowerCase());
      if (!s || p.now() - s.at > 3 * nextBeatMs) return false;
      socket.send(encodeInvite({ seq: ++seq, ...invite }), s.port, s.address);
      counters.invitesSent++;
      return true;
    },
    counters: () => ({ ...counters }),
    close: () => (closing ??= new Promise<void>((resolve) => socket.close(() => resolve()))),
  };
}
