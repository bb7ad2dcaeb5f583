import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { generateKeyPairSync, createPublicKey, verify } from "node:crypto";
import { connectAgent, type HttpClient, type HttpReply, type Identity } from "../../src/network/index.ts";
import { signNonce, signNonceOffLoop, type NonceSigner } from "../../src/network/sign-in.ts";
import { redialBackoff } from "../../src/network/session-channel.ts";
import { computeBackoffDelay } from "../../src/util/backoff.ts";

describe("redialBackoff", () => {
  it("doubles from the base to the ceiling, half fixed and half jitter", () => {
    const settings = redialBackoff(undefined);
    expect(settings).toEqual({ baseMs: 1000, maxMs: 60_000, jitter: 0.5 });
    // After failure n the agent waits computeBackoffDelay(n − 1, …).
    const steps = [1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => computeBackoffDelay(n - 1, settings, () => 0.5));
    expect(steps).toEqual([750, 1500, 3000, 6000, 12000, 24000, 45000, 45000, 45000]);
    expect([computeBackoffDelay(0, settings, () => 0), computeBackoffDelay(0, settings, () => 0.999999)]).toEqual([1000, 500]);
    expect(computeBackoffDelay(2, redialBackoff({ baseMs: 100, maxMs: 250 }), () => 1)).toBe(125);
  });
});

// A scripted access point (an HttpClient that answers from a table): the only way to own the clock
// of a retry loop completely. The real server's refusals are tested over sockets elsewhere.
function scriptedAccessPoint(answer: (url: string, body: Record<string, unknown>) => { status: number; json: unknown }) {
  const calls: Array<{ t: number; url: string; step: "nonce" | "signature" | "other" }> = [];
  const http: HttpClient = {
    async request(): Promise<HttpReply> {
      throw new Error("unused");
    },
    async postJson(url, body) {
      const b = body as Record<string, unknown>;
      calls.push({ t: Date.now(), url, step: url.endsWith("/sign_in") ? (b.nonce ? "signature" : "nonce") : "other" });
      const a = answer(url, b);
      return { status: a.status, headers: {}, text: JSON.stringify(a.json), json: a.json };
    },
    close() {},
  };
  return { http, calls };
}

function fakeIdentity(): Identity {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
  return { aid: "alice.acp.local", privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString(), certPem: "unused", dir: undefined };
}

// The default signer works on libuv's thread pool, on real time; these timelines own the clock, so
// their sign-ins sign with a step that settles on it: at once (a resolved promise), or after a
// scripted wait on the fake clock.
const onTheClock: NonceSigner = (identity, nonce) => Promise.resolve(signNonce(identity, nonce));

describe("signNonceOffLoop", () => {
  it("signs on the thread pool what the network verifies: DER ECDSA-SHA256 over the nonce, in hex, the same as the synchronous signer's key", async () => {
    const identity = fakeIdentity();
    const hex = await signNonceOffLoop(identity, "n-1");
    expect(hex).toMatch(/^[0-9a-f]+$/);
    expect(verify("sha256", Buffer.from("n-1"), identity.publicKeyPem, Buffer.from(hex, "hex"))).toBe(true);
    expect(verify("sha256", Buffer.from("n-2"), identity.publicKeyPem, Buffer.from(hex, "hex"))).toBe(false);
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => signNonceOffLoop(identity, `n${i}`)));
    expect(many.every((h, i) => verify("sha256", Buffer.from(`n${i}`), identity.publicKeyPem, Buffer.from(h, "hex")))).toBe(true);
  });

  it("a key that cannot sign rejects the promise (never a throw on the caller's stack)", async () => {
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    const identity = { ...fakeIdentity(), privateKey: publicKey };
    const signing = signNonceOffLoop(identity, "n");
    await expect(signing).rejects.toThrow();
  });
});

describe("repeated refusals (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a service that keeps failing: sign-in attempts at T+0, 0.75 s, 2.25 s, 5.25 s, 11.25 s, 23.25 s, 47.25 s, 92.25 s, 137.25 s — never a tight loop", async () => {
    const ap = scriptedAccessPoint(() => ({ status: 503, json: { error: "busy" } }));
    const agent = connectAgent({ identity: fakeIdentity(), accessPointUrl: "https://acp3.acp.local", http: ap.http, random: () => 0.5, signer: onTheClock });
    await vi.advanceTimersByTimeAsync(140_000);
    expect(ap.calls.map((c) => c.t)).toEqual([0, 750, 2250, 5250, 11250, 23250, 47250, 92250, 137250]);
    expect(agent.status).toBe("waiting");
    await agent.close();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(ap.calls).toHaveLength(9);
  });

  it("a refused key: one sign-in (nonce + signature), one IDENTITY_REJECTED, then silence for ten minutes", async () => {
    const ap = scriptedAccessPoint((_url, body) => (body.nonce ? { status: 401, json: { error: "signature does not verify" } } : { status: 200, json: { nonce: "n1" } }));
    const agent = connectAgent({ identity: fakeIdentity(), accessPointUrl: "https://acp3.acp.local", http: ap.http, random: () => 0.5, signer: onTheClock });
    const rejected: string[] = [];
    agent.on("rejected", ({ error }) => rejected.push(`${error.code} ${error.aid}`));
    await vi.advanceTimersByTimeAsync(600_000);
    expect(ap.calls.map((c) => [c.t, c.step])).toEqual([
      [0, "nonce"],
      [0, "signature"],
    ]);
    expect(rejected).toEqual(["IDENTITY_REJECTED alice.acp.local"]);
    await expect(agent.ready).rejects.toMatchObject({ code: "IDENTITY_REJECTED", aid: "alice.acp.local" });
    await agent.close();
  });

  it("the nonce's signature is a step the sign-in waits for, on its own clock: a signer done at T+5 s sends the signature at T+5 s, the message service's nonce at T+5 s, its signature at T+10 s", async () => {
    const ap = scriptedAccessPoint((url, body) =>
      url.endsWith("/get_accesspoint_config") ? { status: 200, json: { config: '{"message_server":"https://127.0.0.1:1"}' } } : { status: 200, json: body.nonce ? { signature: "t" } : { nonce: "n" } },
    );
    const signed: number[] = [];
    const slowSigner: NonceSigner = (identity, nonce) =>
      new Promise((resolve) =>
        setTimeout(() => {
          signed.push(Date.now());
          resolve(signNonce(identity, nonce));
        }, 5000),
      );
    const agent = connectAgent({ identity: fakeIdentity(), accessPointUrl: "https://acp3.acp.local", http: ap.http, random: () => 0.5, signer: slowSigner, presence: false });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(ap.calls.map((c) => [c.t, c.step])).toEqual([[0, "nonce"]]);
    await vi.advanceTimersByTimeAsync(5_001);
    expect(ap.calls.map((c) => [c.t, c.step, c.url.replace("https://acp3.acp.local", "")])).toEqual([
      [0, "nonce", "/api/accesspoint/sign_in"],
      [5000, "signature", "/api/accesspoint/sign_in"],
      [5000, "other", "/api/accesspoint/get_accesspoint_config"],
      [5000, "nonce", "/api/message/sign_in"],
      [10000, "signature", "/api/message/sign_in"],
    ]);
    expect(signed).toEqual([5000, 10000]);
    await agent.close();
  });

  it("401/403 that do not refuse the key (a proxy's bare 403, a lost nonce) are retried with backoff: T+0 403, T+0.75 s 401 nonce, T+2.25 s signed in", async () => {
    let attempt = 0;
    const ap = scriptedAccessPoint((url, body) => {
      if (url.endsWith("/api/accesspoint/sign_in") && !body.nonce) {
        attempt++;
        if (attempt === 1) return { status: 403, json: undefined };
      }
      if (url.endsWith("/api/accesspoint/sign_in") && body.nonce && attempt === 2) return { status: 401, json: { error: "unknown or used nonce" } };
      if (url.endsWith("/get_accesspoint_config")) return { status: 200, json: { config: '{"message_server":"https://127.0.0.1:1"}' } };
      return { status: 200, json: body.nonce ? { signature: "t" } : { nonce: "n" } };
    });
    const agent = connectAgent({ identity: fakeIdentity(), accessPointUrl: "https://acp3.acp.local", http: ap.http, random: () => 0.5, signer: onTheClock });
    const rejected: string[] = [];
    agent.on("rejected", ({ error }) => rejected.push(error.code));
    await vi.advanceTimersByTimeAsync(2_300);
    expect(ap.calls.filter((c) => c.step === "nonce" && c.url.includes("/accesspoint/")).map((c) => c.t)).toEqual([0, 750, 2250]);
    expect(ap.calls.some((c) => c.t === 2250 && c.url.endsWith("/api/message/sign_in"))).toBe(true);
    expect(rejected).toEqual([]);
    await agent.close();
  });

  it("a message_server the socket cannot even parse: a failure with backoff, not an unhandled rejection", async () => {
    const ap = scriptedAccessPoint((url, body) =>
      url.endsWith("/get_accesspoint_config") ? { status: 200, json: { config: '{"message_server":"https://[not-a-host"}' } } : { status: 200, json: body.nonce ? { signature: "t" } : { nonce: "n" } },
    );
    const agent = connectAgent({ identity: fakeIdentity(), accessPointUrl: "https://acp3.acp.local", http: ap.http, random: () => 0.5, signer: onTheClock });
    await vi.advanceTimersByTimeAsync(2_300);
    // Five calls per attempt (nonce, signature, config, nonce, signature): attempts at T+0, 0.75 s, 2.25 s.
    expect([...new Set(ap.calls.map((c) => c.t))]).toEqual([0, 750, 2250]);
    expect(agent.status).toBe("waiting");
    await agent.close();
  });
});
