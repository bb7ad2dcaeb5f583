// Where an identity's access point is: `https://acp3.<domain>` for an aid `<name>.<domain>`,
// unless a URL is configured. Pure string work.
import { NetworkError } from "./errors.ts";

/** The domain part of an aid: everything after the first dot. */
export function aidDomain(aid: string): string {
  const dot = aid.indexOf(".");
  if (dot <= 0 || dot === aid.length - 1) throw new NetworkError("INVALID_OPTIONS", `Expected an aid such as alice.agentcp.io, got \`${aid}\``, { aid });
  return aid.slice(dot + 1);
}

/** The group service of an aid's access point (`group.<domain>`). */
export const groupServiceAid = (domain: string): string => `group.${domain}`;

/**
 * The access point base URL. `accessPoint` is a domain, optionally with a port, exactly as the
 * SDK takes it (`agentcp.io`, `acp.local:8443` → `https://acp3.acp.local:8443`).
 */
export function accessPointUrlFor(params: { aid: string; accessPoint?: string | undefined; accessPointUrl?: string | undefined }): string {
  if (params.accessPointUrl) return params.accessPointUrl.replace(/\/+$/, "");
  return `https://acp3.${params.accessPoint ?? aidDomain(params.aid)}`;
}

export const accessPointApi = (base: string, endpoint: string): string => `${base.replace(/\/+$/, "")}/api/accesspoint/${endpoint}`;
export const messageApi = (base: string, endpoint: string): string => `${base.replace(/\/+$/, "")}/api/message/${endpoint}`;

/** `message_server` (https) → the session socket URL (wss) with the token. */
export function sessionSocketUrl(params: { messageServer: string; aid: string; token: string }): string {
  const base = params.messageServer.replace(/^https:/, "wss:").replace(/^http:/, "ws:").replace(/\/+$/, "");
  return `${base}/session?agent_id=${encodeURIComponent(params.aid)}&signature=${encodeURIComponent(params.token)}`;
}
