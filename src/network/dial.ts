// Opens an identity's message socket with the network's TLS rules and frame limit, under a
// deadline for the whole opening handshake: ws's own `handshakeTimeout` is an idle timer on the
// upgrade request, so a server that trickles its answer a byte at a time would hold it for ever.
// Remembers why a socket failed when its certificate is the reason, for one line with the fix.
// Every socket of the process with the same TLS rules shares one secure context (trust.ts).
import type { Agent } from "node:http";
import WebSocket from "ws";
import { MAX_SOCKET_FRAME_BYTES } from "../wire/limits.ts";
import { tlsConnectOptions, type TlsOptions } from "./http-client.ts";
import { describeMessageServerCertificate } from "./unreachable.ts";

export const DEFAULT_DIAL_TIMEOUT_MS = 15_000;

const certificateProblems = new WeakMap<WebSocket, string>();

/**
 * `agent`: the sign-in's kept-alive agent (HttpClient.socketAgent). The upgrade then takes one of
 * its idle connections, or opens one resuming its TLS session: no certificate sent, signed for and
 * verified again (two P-384 verifications here, a signature at the network, per full handshake).
 */
export function dialMessageSocket(url: string, tls: TlsOptions | undefined, timeoutMs = DEFAULT_DIAL_TIMEOUT_MS, agent?: Agent): WebSocket {
  // The process's shared secure context (trust.ts). No per-message deflate: frames are small JSON,
  // and a compressor pair per socket would cost hundreds of KB on each of a thousand identities.
  const ws = new WebSocket(url, { ...tlsConnectOptions(tls), ...(agent ? { agent } : {}), handshakeTimeout: timeoutMs, maxPayload: MAX_SOCKET_FRAME_BYTES, perMessageDeflate: false });
  /** Ends a handshake still under way at the deadline; cleared when the socket opens or closes. */
  const deadline = setTimeout(() => {
    if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  }, timeoutMs);
  deadline.unref?.();
  const clear = () => clearTimeout(deadline);
  ws.once("open", clear);
  ws.once("close", clear);
  ws.on("error", (err) => {
    const problem = describeMessageServerCertificate(err, url);
    if (problem !== undefined && !certificateProblems.has(ws)) certificateProblems.set(ws, problem);
  });
  return ws;
}

/** Why `ws` could not open, when its certificate is why (one line naming the fix); else undefined. */
export const certificateProblemOf = (ws: WebSocket): string | undefined => certificateProblems.get(ws);

/** Closes `ws` with 1000 and waits for the close, at most `graceMs`; then it is terminated. */
export function closeMessageSocket(ws: WebSocket, graceMs: number): Promise<void> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise<void>((resolve) => {
    /** Ends a close the peer does not answer; cleared when the close comes. */
    const grace = setTimeout(() => {
      ws.terminate();
      resolve();
    }, graceMs);
    ws.once("close", () => {
      clearTimeout(grace);
      resolve();
    });
    ws.close(1000, "closing");
  });
}
