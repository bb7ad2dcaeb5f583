// The UDP presence datagrams every ACP SDK exchanges with `heartbeat_server`, byte for byte:
// a header (varint mask, varint sequence, u16 big-endian type, u16 big-endian payload size), then
//   513 heartbeat     varint length + aid (UTF-8), u64 BE sign cookie
//   258 heartbeat ack varint next beat in ms (401: sign in again)
//   259 invite        inviter, invite code (each varint length + UTF-8), i64 BE expiry, session id, message server
//   516 invite ack    aid, inviter, session id, u64 BE sign cookie
// Varints are unsigned LEB128. Decoding never throws: a datagram that does not parse is undefined.
// Pure; both ends (src/network/presence.ts, the local network's presence server) use it.

export const PRESENCE_TYPES = { HEARTBEAT: 513, HEARTBEAT_ACK: 258, INVITE: 259, INVITE_ACK: 516 } as const;
/** A next-beat value that means "not signed in here": sign in again. */
export const NEXT_BEAT_SIGN_IN_AGAIN = 401;
/** What the SDKs put in a heartbeat's payload-size field (they never fill it in). */
const HEARTBEAT_PAYLOAD_SIZE = 100;
/** Longest string field read from a datagram (aids, codes, URLs): a datagram is small. */
const MAX_FIELD_BYTES = 1024;

export interface PresenceHeader {
  mask: bigint;
  seq: bigint;
  type: number;
  payloadSize: number;
}

export interface PresenceInvite {
  inviter: string;
  inviteCode: string;
  /** Expiry of the invite code, as the service sent it (signed 64-bit). */
  expires: bigint;
  sessionId: string;
  messageServer: string;
}

export type PresenceDatagram =
  | { header: PresenceHeader; kind: "heartbeat"; aid: string; cookie: bigint }
  | { header: PresenceHeader; kind: "heartbeat-ack"; nextBeatMs: number }
  | { header: PresenceHeader; kind: "invite"; invite: PresenceInvite }
  | { header: PresenceHeader; kind: "invite-ack"; aid: string; inviter: string; sessionId: string; cookie: bigint };

const U64_MAX = (1n << 64n) - 1n;

function varint(v: bigint | number): Buffer {
  let n = BigInt(v);
  if (n < 0n || n > U64_MAX) throw new RangeError(`varint out of range: ${n}`);
  const bytes: number[] = [];
  while (n >= 0x80n) {
    bytes.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  bytes.push(Number(n));
  return Buffer.from(bytes);
}

function str(s: string): Buffer {
  const b = Buffer.from(s, "utf8");
  return Buffer.concat([varint(b.length), b]);
}

function u64(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt.asUintN(64, v));
  return b;
}

function header(type: number, seq: bigint | number, payloadSize = 0): Buffer {
  const t = Buffer.alloc(4);
  t.writeUInt16BE(type, 0);
  t.writeUInt16BE(payloadSize, 2);
  return Buffer.concat([varint(0), varint(seq), t]);
}

export function encodeHeartbeat(p: { seq: number; aid: string; cookie: bigint }): Buffer {
  return Buffer.concat([header(PRESENCE_TYPES.HEARTBEAT, p.seq, HEARTBEAT_PAYLOAD_SIZE), str(p.aid), u64(p.cookie)]);
}

export function encodeHeartbeatAck(p: { seq: number; nextBeatMs: number }): Buffer {
  return Buffer.concat([header(PRESENCE_TYPES.HEARTBEAT_ACK, p.seq), varint(p.nextBeatMs)]);
}

export function encodeInvite(p: { seq: number } & PresenceInvite): Buffer {
  const expires = Buffer.alloc(8);
  expires.writeBigInt64BE(BigInt.asIntN(64, p.expires));
  return Buffer.concat([header(PRESENCE_TYPES.INVITE, p.seq), str(p.inviter), str(p.inviteCode), expires, str(p.sessionId), str(p.messageServer)]);
}

export function encodeInviteAck(p: { seq: number; aid: string; inviter: string; sessionId: string; cookie: bigint }): Buffer {
  return Buffer.concat([header(PRESENCE_TYPES.INVITE_ACK, p.seq), str(p.aid), str(p.inviter), str(p.sessionId), u64(p.cookie)]);
}

/** A cursor over one datagram; every read throws RangeError past the end (caught by decode). */
class Reader {
  readonly buf: Buffer;
  #at = 0;
  constructor(buf: Buffer) {
    this.buf = buf;
  }
  varint(): bigint {
    let v = 0n;
    for (let shift = 0n, i = 0; i < 10; i++, shift += 7n) {
      if (this.#at >= this.buf.length) throw new RangeError("varint past the end");
      const b = this.buf[this.#at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
    }
    throw new RangeError("varint longer than 10 bytes");
  }
  u16(): number {
    const v = this.buf.readUInt16BE(this.#at);
    this.#at += 2;
    return v;
  }
  u64(): bigint {
    const v = this.buf.readBigUInt64BE(this.#at);
    this.#at += 8;
    return v;
  }
  i64(): bigint {
    const v = this.buf.readBigInt64BE(this.#at);
    this.#at += 8;
    return v;
  }
  str(): string {
    const n = this.varint();
    if (n > BigInt(MAX_FIELD_BYTES) || this.#at + Number(n) > this.buf.length) throw new RangeError("string past the end");
    const s = this.buf.toString("utf8", this.#at, this.#at + Number(n));
    this.#at += Number(n);
    return s;
  }
}

/** Parses one datagram; undefined when it is not one of the four, or is cut short. */
export function decodePresence(buf: Buffer): PresenceDatagram | undefined {
  try {
    const r = new Reader(buf);
    const h: PresenceHeader = { mask: r.varint(), seq: r.varint(), type: r.u16(), payloadSize: r.u16() };
    switch (h.type) {
      case PRESENCE_TYPES.HEARTBEAT:
        return { header: h, kind: "heartbeat", aid: r.str(), cookie: r.u64() };
      case PRESENCE_TYPES.HEARTBEAT_ACK: {
        const next = r.varint();
        return { header: h, kind: "heartbeat-ack", nextBeatMs: next > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(next) };
      }
      case PRESENCE_TYPES.INVITE:
        return { header: h, kind: "invite", invite: { inviter: r.str(), inviteCode: r.str(), expires: r.i64(), sessionId: r.str(), messageServer: r.str() } };
      case PRESENCE_TYPES.INVITE_ACK:
        return { header: h, kind: "invite-ack", aid: r.str(), inviter: r.str(), sessionId: r.str(), cookie: r.u64() };
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/** A sign cookie as the heartbeat server's sign-in gives it (a number or a decimal string); undefined when it is neither. */
export function parseSignCookie(v: unknown): bigint | undefined {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === "string" && /^\d{1,20}$/.test(v)) {
    const n = BigInt(v);
    return n <= U64_MAX ? n : undefined;
  }
  return undefined;
}
