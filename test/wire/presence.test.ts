// The presence datagrams byte for byte as the official SDK (acp-ts message_serialize, same as the
// Python SDK's) writes and reads them: the vectors below were produced by the SDK's own serializer
// (heartbeat, invite ack) and our invite and heartbeat ack were read back by its deserializer.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodePresence, encodeHeartbeat, encodeHeartbeatAck, encodeInvite, encodeInviteAck, parseSignCookie } from "../../src/wire/presence.ts";

const hex = (b: Buffer) => b.toString("hex");

describe("presence datagrams", () => {
  it("a heartbeat (513): varint mask 0, varint seq, u16 type, u16 payload size 100, varint-length aid, u64 BE cookie — as the SDK writes it", () => {
    expect(hex(encodeHeartbeat({ seq: 7, aid: "alice.acp.local", cookie: 1234567890123n }))).toBe("0007020100640f616c6963652e6163702e6c6f63616c0000011f71fb04cb");
  });

  it("an invite ack (516), with a two-byte varint sequence — as the SDK writes it", () => {
    expect(hex(encodeInviteAck({ seq: 300, aid: "alice.acp.local", inviter: "bob.acp.local", sessionId: "s1", cookie: 42n }))).toBe(
      "00ac02020400000f616c6963652e6163702e6c6f63616c0d626f622e6163702e6c6f63616c027331000000000000002a",
    );
  });

  it("a heartbeat ack (258, next beat 5000) and an invite (259, expiry −1) as the SDK reads them", () => {
    expect(hex(encodeHeartbeatAck({ seq: 1, nextBeatMs: 5000 }))).toBe("0001010200008827");
    expect(hex(encodeInvite({ seq: 2, inviter: "bob.acp.local", inviteCode: "c0de", expires: -1n, sessionId: "s9", messageServer: "wss://x" }))).toBe(
      "0002010300000d626f622e6163702e6c6f63616c0463306465ffffffffffffffff027339077773733a2f2f78",
    );
  });

  it("decodes each of the four back; anything cut short or of another type is undefined, never a throw", () => {
    const hb = decodePresence(encodeHeartbeat({ seq: 7, aid: "alice.acp.local", cookie: 2n ** 63n }));
    expect(hb).toMatchObject({ kind: "heartbeat", aid: "alice.acp.local", cookie: 2n ** 63n, header: { seq: 7n, type: 513, payloadSize: 100 } });
    expect(decodePresence(encodeHeartbeatAck({ seq: 1, nextBeatMs: 401 }))).toMatchObject({ kind: "heartbeat-ack", nextBeatMs: 401 });
    expect(decodePresence(encodeInvite({ seq: 2, inviter: "b", inviteCode: "c", expires: -5n, sessionId: "s", messageServer: "m" }))).toMatchObject({
      kind: "invite",
      invite: { inviter: "b", inviteCode: "c", expires: -5n, sessionId: "s", messageServer: "m" },
    });
    expect(decodePresence(encodeInviteAck({ seq: 3, aid: "a", inviter: "b", sessionId: "s", cookie: 9n }))).toMatchObject({ kind: "invite-ack", aid: "a", inviter: "b", sessionId: "s", cookie: 9n });
    const whole = encodeHeartbeat({ seq: 7, aid: "alice.acp.local", cookie: 1n });
    for (let n = 0; n < whole.length; n++) expect(decodePresence(whole.subarray(0, n))).toBeUndefined();
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => void decodePresence(Buffer.from(bytes))));
  });

  it("reads a sign cookie as the heartbeat sign-in gives it: a number or a decimal string", () => {
    expect([parseSignCookie(12), parseSignCookie("18446744073709551615"), parseSignCookie("18446744073709551616"), parseSignCookie("x"), parseSignCookie(-1)]).toEqual([
      12n,
      18446744073709551615n,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
