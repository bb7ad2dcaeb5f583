// One read-only request to an access point, for checks that run before (or beside) signing in:
// does it answer at all, and what time does it say it is. Nothing is signed and nothing is issued:
// the request is `get_accesspoint_config`, which the sign-in sequence sends too.
import { accessPointApi } from "./access-point.ts";
import { createHttpClient, type TlsOptions } from "./http-client.ts";
import { diagnoseUnreachable } from "./unreachable.ts";

export type AccessPointProbe =
  | {
      reachable: true;
      url: string;
      status: number;
      /** Local clock (ms) when the request was sent and when the answer arrived. */
      sentAt: number;
      receivedAt: number;
      /** The server's `Date` header (ms, whole seconds), when it sent one. */
      serverDate: number | undefined;
    }
  | { reachable: false; url: string; why: string };

export async function probeAccessPoint(p: { accessPointUrl: string; aid: string; tls?: TlsOptions; now: () => number; timeoutMs?: number }): Promise<AccessPointProbe> {
  const url = accessPointApi(p.accessPointUrl, "get_accesspoint_config");
  const timeoutMs = p.timeoutMs ?? 5_000;
  const http = createHttpClient(p.tls ?? {});
  const sentAt = p.now();
  try {
    const reply = await http.request(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ agent_id: p.aid }), timeoutMs });
    const receivedAt = p.now();
    const header = reply.headers.date;
    const parsed = typeof header === "string" ? Date.parse(header) : Number.NaN;
    return { reachable: true, url, status: reply.status, sentAt, receivedAt, serverDate: Number.isNaN(parsed) ? undefined : parsed };
  } catch (err) {
    const timedOut = (err as { code?: unknown }).code === "HTTP_TIMEOUT";
    const why = (await diagnoseUnreachable(err, p.accessPointUrl, p.tls)) ?? (timedOut ? `no answer from ${p.accessPointUrl} within ${Math.round(timeoutMs / 1000)} s` : err instanceof Error ? err.message : String(err));
    return { reachable: false, url, why };
  } finally {
    http.close();
  }
}

/**
 * How far the local clock is ahead of the server's (negative: behind), from one request's
 * send/receive times and the server's `Date` header. The header has whole seconds, and the server
 * stamped it somewhere between send and receive: `uncertaintyMs` bounds the error of `skewMs`.
 */
export function estimateClockSkew(p: { sentAt: number; receivedAt: number; serverDate: number }): { skewMs: number; uncertaintyMs: number } {
  const midpoint = (p.sentAt + p.receivedAt) / 2;
  // The header truncates to the second: the true server time was in [date, date + 1000).
  const serverMidpoint = p.serverDate + 500;
  return { skewMs: Math.round(midpoint - serverMidpoint), uncertaintyMs: Math.round((p.receivedAt - p.sentAt) / 2 + 500) };
}
