// Publishing our agent.md and reading others': `POST/GET https://<aid>/agent.md`. Nothing here
// throws to its caller: a profile is a courtesy to the network, and a failure to publish or read
// one is one log line, never a reason to stop an identity.
import { errorFields } from "../log.ts";
import type { Logger } from "../types.ts";
import { AGENT_MD_MAX_BYTES, byteLength, parseAgentMd, type ParsedAgentMd } from "./agent-md.ts";
import { isFetchableAid } from "./profile-host.ts";

/** The part of `fetch` we use; the global one fits, and the local network injects its own. */
export type FetchLike = (
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{ ok: boolean; status: number; headers?: { get(name: string): string | null }; text(): Promise<string> }>;

/** Where an aid's profile lives: the aid itself is the host name. */
export function agentMdUrl(aid: string): string {
  return `https://${aid}/agent.md`;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export type PublishResult = { ok: true; status: number } | { ok: false; reason: "too-large" | "http-status" | "network"; status?: number };

/**
 * `POST https://<aid>/agent.md` with the message-service token. On failure: one `warn` line
 * (`profile.publish-failed`, with the aid and status or error) and `{ ok: false }`; never throws.
 */
export async function publishAgentMd(p: {
  aid: string;
  text: string;
  token: string;
  fetch: FetchLike;
  url?: string;
  logger?: Logger;
  timeoutMs?: number;
}): Promise<PublishResult> {
  const url = p.url ?? agentMdUrl(p.aid);
  const warn = (fields: Record<string, unknown>) => p.logger?.log("warn", "profile.publish-failed", { aid: p.aid, url, ...fields });
  const bytes = byteLength(p.text);
  if (bytes > AGENT_MD_MAX_BYTES) {
    warn({ reason: "too-large", bytes, max: AGENT_MD_MAX_BYTES });
    return { ok: false, reason: "too-large" };
  }
  try {
    const res = await p.fetch(url, {
      method: "POST",
      headers: { "Content-Type": "text/markdown", Authorization: `Bearer ${p.token}` },
      body: p.text,
      signal: AbortSignal.timeout(p.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
    if (!res.ok) {
      warn({ reason: "http-status", status: res.status });
      return { ok: false, reason: "http-status", status: res.status };
    }
    return { ok: true, status: res.status };
  } catch (err) {
    // errorFields carries the message only: the token is in a header, never in an error text we build.
    const { stack: _stack, ...fields } = errorFields(err);
    warn({ reason: "network", ...fields });
    return { ok: false, reason: "network" };
  }
}

export type FetchAgentMdResult =
  | { ok: true; text: string; profile: ParsedAgentMd }
  | { ok: false; reason: "not-found" | "too-large" | "http-status" | "network" | "bad-aid"; status?: number };

/**
 * `GET https://<aid>/agent.md`: anyone's public profile, parsed. A profile over 4 KB is refused
 * unread past the limit's worth. Never throws; a failure is a `debug` line (strangers often
 * have none). An aid that is not a host name (`127.0.0.1:80/x?`) is not requested: "bad-aid".
 */
export async function fetchAgentMd(p: { aid: string; fetch: FetchLike; url?: string; logger?: Logger; timeoutMs?: number }): Promise<FetchAgentMdResult> {
  if (p.url === undefined && !isFetchableAid(p.aid)) {
    p.logger?.log("debug", "profile.fetch-refused", { aid: p.aid, reason: "bad-aid" });
    return { ok: false, reason: "bad-aid" };
  }
  const url = p.url ?? agentMdUrl(p.aid);
  try {
    const res = await p.fetch(url, { method: "GET", headers: { Accept: "text/markdown" }, signal: AbortSignal.timeout(p.timeoutMs ?? DEFAULT_TIMEOUT_MS) });
    if (res.status === 404) return { ok: false, reason: "not-found", status: 404 };
    if (!res.ok) {
      p.logger?.log("debug", "profile.fetch-failed", { aid: p.aid, status: res.status });
      return { ok: false, reason: "http-status", status: res.status };
    }
    // A stranger's server decides what it sends: refuse a declared oversize body before reading it.
    const declared = Number(res.headers?.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared > AGENT_MD_MAX_BYTES) return { ok: false, reason: "too-large" };
    const text = await res.text();
    if (byteLength(text) > AGENT_MD_MAX_BYTES) return { ok: false, reason: "too-large" };
    return { ok: true, text, profile: parseAgentMd(text) };
  } catch (err) {
    p.logger?.log("debug", "profile.fetch-failed", { aid: p.aid, error: errorFields(err).error });
    return { ok: false, reason: "network" };
  }
}
