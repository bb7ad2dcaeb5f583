// The local network's CA check and key registry as a thousand agents use them: a certificate's
// CA signature checked once (its dates at every sign-in), and registrations saved off the event
// loop, coalesced, each one on disk when its promise settles. Real keys, real files.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { X509Certificate } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { generateIdentityKey, toCryptoKeys } from "../../../src/network/x509.ts";
import { AidRegistry } from "../../../src/server/network/aid-registry.ts";
import { IDENTITY_CERT_DAYS, openLocalCa } from "../../../src/server/network/local-ca.ts";

const T0 = Date.parse("2026-11-26T12:00:00Z");
const DAY = 86_400_000;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ca-registry-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("LocalCa.check, asked again and again for one certificate", () => {
  it("still says expired and not yet valid by the time asked, after a check that passed", async () => {
    const ca = await openLocalCa({ dir: join(dir, "ca"), domain: "acp.local", now: T0 });
    const pem = await ca.issue({ aid: "alice.acp.local", publicKey: toCryptoKeys(generateIdentityKey().privateKey).publicKey, now: T0 });
    expect(ca.check(pem, T0 + DAY)).toMatchObject({ ok: true, aid: "alice.acp.local" });
    expect(ca.check(pem, T0 + DAY)).toMatchObject({ ok: true, aid: "alice.acp.local" });
    expect(ca.check(pem, T0 + (IDENTITY_CERT_DAYS + 1) * DAY)).toEqual({ ok: false, reason: "expired" });
    expect(ca.check(pem, T0 - 2 * DAY)).toEqual({ ok: false, reason: "not-yet-valid" });
    expect(ca.check(pem, T0 + DAY)).toMatchObject({ ok: true });
  });

  it("another CA's certificate is refused every time it is sent", async () => {
    const ours = await openLocalCa({ dir: join(dir, "ours"), domain: "acp.local", now: T0 });
    const theirs = await openLocalCa({ dir: join(dir, "theirs"), domain: "acp.local", now: T0 });
    const pem = await theirs.issue({ aid: "alice.acp.local", publicKey: toCryptoKeys(generateIdentityKey().privateKey).publicKey, now: T0 });
    for (let i = 0; i < 3; i++) expect(ours.check(pem, T0 + DAY)).toEqual({ ok: false, reason: "not-issued-here" });
  });
});

describe("LocalCa.check of the certificates it issued", () => {
  it("takes them by their fingerprint, kept on disk, without verifying their signature again, also after a restart; a changed byte is verified (and refused)", async () => {
    const ca = await openLocalCa({ dir: join(dir, "ca"), domain: "acp.local", now: T0 });
    const pems = [];
    for (const aid of ["alice.acp.local", "bob.acp.local"]) pems.push(await ca.issue({ aid, publicKey: toCryptoKeys(generateIdentityKey().privateKey).publicKey, now: T0 }));
    const verify = vi.spyOn(X509Certificate.prototype, "verify");
    try {
      expect(ca.check(pems[0]!, T0 + DAY)).toMatchObject({ ok: true, aid: "alice.acp.local" });
      // A restart: the network opens its CA from the same folder.
      const again = await openLocalCa({ dir: join(dir, "ca"), domain: "acp.local", now: T0 });
      expect(again.check(pems[1]!, T0 + DAY)).toMatchObject({ ok: true, aid: "bob.acp.local" });
      expect(again.check(pems[0]!, T0 + (IDENTITY_CERT_DAYS + 1) * DAY)).toEqual({ ok: false, reason: "expired" });
      expect(verify).not.toHaveBeenCalled();
      // One byte of the signature changed: not a certificate this CA issued, so it is verified.
      const der = Buffer.from(pems[0]!.replace(/-----[^-]+-----|\s/g, ""), "base64");
      der[der.length - 5]! ^= 1;
      const forged = `-----BEGIN CERTIFICATE-----\n${der.toString("base64")}\n-----END CERTIFICATE-----\n`;
      expect(again.check(forged, T0 + DAY)).toEqual({ ok: false, reason: "not-issued-here" });
      expect(verify).toHaveBeenCalledTimes(1);
    } finally {
      verify.mockRestore();
    }
  });
});

describe("AidRegistry.register", () => {
  it("each registration is on disk when its promise settles, however they interleave", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.boolean()), { minLength: 1, maxLength: 40 }), async (steps) => {
        const state = mkdtempSync(join(dir, "run-"));
        const registry = new AidRegistry(state);
        const pending: Array<Promise<void>> = [];
        const settledOnDisk: Array<Promise<void>> = [];
        for (const [n, wait] of steps) {
          const aid = `a${n}.acp.local`;
          const key = `key-${n}-${pending.length}`;
          const saved = registry.register(aid, key);
          pending.push(saved);
          // The moment it settles, a registry opened from disk (a restart) knows this key or a newer one of this aid.
          settledOnDisk.push(
            saved.then(() => {
              const owner = new AidRegistry(state).owner(aid.toUpperCase());
              expect(owner?.startsWith(`key-${n}-`)).toBe(true);
              expect(Number(owner!.split("-")[2])).toBeGreaterThanOrEqual(Number(key.split("-")[2]));
            }),
          );
          if (wait) await saved;
        }
        await Promise.all(settledOnDisk);
        const last = new Map(steps.map(([n], i) => [n, i]));
        const reopened = new AidRegistry(state);
        for (const [n, i] of last) expect(reopened.owner(`a${n}.acp.local`)).toBe(`key-${n}-${i}`);
      }),
      { numRuns: 25 },
    );
  });
});
