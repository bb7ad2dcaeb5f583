// The network's TLS rules as objects every socket of the process shares: one secure context per
// trust configuration (a private CA on top of the system roots, or the roots alone), and per
// configuration and resolver one keep-alive HTTPS agent and one HTTP agent. A secure context with
// the 121 system roots and a private CA costs ~3.5 ms of CPU and ~0.9 MB of native memory to
// build; built per connection, a thousand identities paid that a few thousand times at start-up.
// The CA file is read when the configuration is first seen, and again only when the file changes
// (its size or modification time), so a network that renews its CA is trusted without a restart.
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { LookupFunction } from "node:net";
import { readFileSync, statSync } from "node:fs";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import { NetworkError } from "./errors.ts";
import { DEFAULT_SIGN_IN_CONCURRENCY } from "./sign-in-pace.ts";

export interface TlsOptions {
  /** A PEM file of a private CA to trust besides the system roots (e.g. a local network's CA). */
  caFile?: string;
  /** The same as PEM text. */
  ca?: string;
  /** Skip certificate verification. Explicit opt-out; logged at warn by whoever enables it. */
  insecureTls?: boolean;
  /** Resolve host names differently (tests point `acp3.<domain>` at 127.0.0.1). */
  lookup?: LookupFunction;
}

/** What `tls.connect`, `https.request` and `ws` take to honour TlsOptions, shared by every caller with the same rules. */
export interface TlsConnectOptions {
  /** Absent when only the system roots are trusted (Node's own shared default context then). */
  secureContext?: SecureContext;
  rejectUnauthorized: boolean;
  lookup?: LookupFunction;
}

interface Trust {
  readonly options: Omit<TlsConnectOptions, "lookup">;
  /** The CA file's size and modification time when read: a change builds a new context. */
  readonly fileStamp: string;
}

/** Trust configuration key (CA file path, PEM text, opt-out) → the shared context. */
const trusts = new Map<string, Trust>();
/** How many secure contexts were built (a test witness that they are shared). */
let contextsBuilt = 0;

const stampOf = (file: string): string => {
  try {
    const s = statSync(file);
    return `${s.size}:${s.mtimeMs}`;
  } catch (err) {
    throw new NetworkError("INVALID_OPTIONS", `cannot read the CA file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
};

function trustOf(tls: TlsOptions): Trust {
  const key = `${tls.caFile ?? ""}\u0000${tls.ca ?? ""}\u0000${tls.insecureTls === true}`;
  const fileStamp = tls.caFile ? stampOf(tls.caFile) : "";
  const known = trusts.get(key);
  if (known && known.fileStamp === fileStamp) return known;
  const extra: string[] = [];
  if (tls.caFile) {
    try {
      extra.push(readFileSync(tls.caFile, "utf8"));
    } catch (err) {
      throw new NetworkError("INVALID_OPTIONS", `cannot read the CA file ${tls.caFile}: ${(err as Error).message}`, { cause: err });
    }
  }
  if (tls.ca) extra.push(tls.ca);
  let secureContext: SecureContext | undefined;
  if (extra.length > 0) {
    try {
      secureContext = createSecureContext({ ca: [...rootCertificates, ...extra] });
    } catch (err) {
      const where = tls.caFile ? `the CA file ${tls.caFile}` : "the CA";
      throw new NetworkError("INVALID_OPTIONS", `${where} holds no usable PEM certificate: ${(err as Error).message}`, { cause: err });
    }
    contextsBuilt++;
  }
  const trust: Trust = { options: { ...(secureContext ? { secureContext } : {}), rejectUnauthorized: tls.insecureTls !== true }, fileStamp };
  trusts.set(key, trust);
  return trust;
}

/** The shared TLS options for these rules (the CA file read once, one secure context per configuration). */
export function tlsConnectOptions(tls: TlsOptions = {}): TlsConnectOptions {
  return { ...trustOf(tls).options, ...(tls.lookup ? { lookup: tls.lookup } : {}) };
}

/** How many secure contexts this process has built so far. */
export const secureContextsBuilt = (): number => contextsBuilt;

interface SharedAgents {
  https: HttpsAgent;
  http: HttpAgent;
  users: number;
}

/** Per trust options and resolver: the keep-alive agents every client with those rules shares. */
const agents = new WeakMap<object, Map<LookupFunction | undefined, SharedAgents>>();

/**
 * Idle keep-alive sockets per origin: what a paced sign-in storm has in flight (each identity's
 * sign-in and, beside it, its presence sign-in or agent.md publish), so a burst's connections serve
 * the next one instead of being closed and opened again; idle ones end with the server's keep-alive.
 */
export const KEEP_ALIVE_FREE_SOCKETS = 2 * DEFAULT_SIGN_IN_CONCURRENCY;

/**
 * The keep-alive agents for `tls`, shared by every client with the same rules and resolver;
 * `release` gives them back (the last user destroys them: no idle socket outlives its clients).
 */
export function acquireAgents(tls: TlsOptions = {}): { https: HttpsAgent; http: HttpAgent; release(): void } {
  const options = trustOf(tls).options;
  let byLookup = agents.get(options);
  if (!byLookup) agents.set(options, (byLookup = new Map()));
  let shared = byLookup.get(tls.lookup);
  if (!shared || shared.users === 0) {
    const lookup = tls.lookup ? { lookup: tls.lookup } : {};
    shared = {
      https: new HttpsAgent({ ...options, ...lookup, keepAlive: true, maxFreeSockets: KEEP_ALIVE_FREE_SOCKETS, scheduling: "lifo" }),
      http: new HttpAgent({ keepAlive: true, maxFreeSockets: KEEP_ALIVE_FREE_SOCKETS, scheduling: "lifo", ...lookup } as ConstructorParameters<typeof HttpAgent>[0]),
      users: 0,
    };
    byLookup.set(tls.lookup, shared);
  }
  const mine = shared;
  mine.users++;
  let released = false;
  return {
    https: mine.https,
    http: mine.http,
    release() {
      if (released) return;
      released = true;
      if (--mine.users > 0) return;
      mine.https.destroy();
      mine.http.destroy();
      if (byLookup.get(tls.lookup) === mine) byLookup.delete(tls.lookup);
    },
  };
}
