// The doctor's checks that need the network: can each identity's access point be reached, and does
// this machine's clock agree with the server's. One read-only request per access point (see
// src/network/access-point-probe.ts), all at once, each bounded by a timeout. Every finding carries
// the command that fixes it, in the same form as the offline checks in openclaw-admin.ts.
import { parseChannelConfig } from "../config/load.ts";
import { accessPointUrlFor } from "../network/access-point.ts";
import { estimateClockSkew, probeAccessPoint, type AccessPointProbe } from "../network/access-point-probe.ts";
import type { TlsOptions } from "../network/http-client.ts";
import type { ChannelConfig } from "../types.ts";
import { ACP_GROUP_CHANNEL_ID } from "./host-calls.ts";

const PATH = `channels.${ACP_GROUP_CHANNEL_ID}`;

/**
 * Beyond a minute the clock is not synchronised at all (time sync keeps it within a second), and
 * the offsets start to show: certificate dates judged on this machine, message times the agent reads.
 */
export const CLOCK_SKEW_LIMIT_MS = 60_000;

export type ProbeAccessPoint = typeof probeAccessPoint;

function sectionOf(cfg: unknown): ChannelConfig | undefined {
  const channels = typeof cfg === "object" && cfg !== null ? (cfg as { channels?: unknown }).channels : undefined;
  const section = typeof channels === "object" && channels !== null ? (channels as Record<string, unknown>)[ACP_GROUP_CHANNEL_ID] : undefined;
  if (section === undefined) return undefined;
  try {
    return parseChannelConfig(section, { prefix: PATH });
  } catch {
    // A config that does not parse is reported by the offline checks; nothing to probe.
    return undefined;
  }
}

/** `2 min 5 s`, `3 h 10 min`, `45 s`. */
export function formatSkew(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const min = Math.floor((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${min ? ` ${min} min` : ""}`;
}

/** The same URL with the other scheme, for a server that speaks (or does not speak) TLS. */
function withScheme(url: string, scheme: "http:" | "https:"): string {
  try {
    const u = new URL(url);
    u.protocol = scheme;
    return u.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}

function unreachableFix(why: string, accountId: string, url: string): string {
  const set = (value: string) => `\`openclaw config set ${PATH}.identities.${accountId}.accessPointUrl ${value}\``;
  if (why.startsWith("certificate not trusted")) return `Trust the network's CA: \`openclaw config set ${PATH}.network.caFile <the network's ca.crt>\``;
  if (/does not speak TLS/.test(why)) return `It answers without TLS: ${set(withScheme(url, "http:"))}`;
  if (/use https:\/\//.test(why)) return `It answers with TLS: ${set(withScheme(url, "https:"))}`;
  return `Check the address (a local network: is \`acp-group server\` running?), then set it: ${set("<access point URL>")}`;
}

/**
 * `openclaw doctor`, network part: an access point that cannot be reached (per identity, with why
 * and the fix), and this machine's clock off from the server's by more than CLOCK_SKEW_LIMIT_MS
 * (once, against the first access point that sent its time).
 */
export async function collectAcpGroupNetworkWarnings(p: { cfg: unknown; now: () => number; timeoutMs?: number; probe?: ProbeAccessPoint }): Promise<string[]> {
  const config = sectionOf(p.cfg);
  if (!config) return [];
  const probe = p.probe ?? probeAccessPoint;
  const tls: TlsOptions = { ...(config.network.caFile ? { caFile: config.network.caFile } : {}), ...(config.network.insecureTls ? { insecureTls: true } : {}) };
  const identities = Object.entries(config.identities).filter(([, identity]) => identity.enabled);
  // One request per access point, however many identities share it.
  const byUrl = new Map<string, Promise<AccessPointProbe>>();
  for (const [, identity] of identities) {
    const url = accessPointUrlFor(identity);
    if (!byUrl.has(url)) byUrl.set(url, probe({ accessPointUrl: url, aid: identity.aid, tls, now: p.now, ...(p.timeoutMs !== undefined ? { timeoutMs: p.timeoutMs } : {}) }));
  }
  const out: string[] = [];
  let clockChecked = false;
  for (const [accountId, identity] of identities) {
    const url = accessPointUrlFor(identity);
    const result = await byUrl.get(url)!;
    const where = `${PATH}.identities.${accountId} (${identity.aid})`;
    if (!result.reachable) {
      // (the reason without its own "cannot reach <origin>:" lead, which the line already says)
      out.push(`- ${where}: the access point ${url} cannot be reached: ${result.why.replace(/^cannot reach \S+: /, "")}. ${unreachableFix(result.why, accountId, url)}`);
      continue;
    }
    if (clockChecked || result.serverDate === undefined) continue;
    clockChecked = true;
    const { skewMs, uncertaintyMs } = estimateClockSkew({ sentAt: result.sentAt, receivedAt: result.receivedAt, serverDate: result.serverDate });
    if (Math.abs(skewMs) - uncertaintyMs > CLOCK_SKEW_LIMIT_MS) {
      out.push(
        `- ${where}: this machine's clock is ${formatSkew(skewMs)} ${skewMs > 0 ? "ahead of" : "behind"} the access point ${url} (its Date header); ` +
          `certificate dates and message times are judged wrong by that much. Turn on time sync: \`sudo timedatectl set-ntp true\` (then \`timedatectl status\` shows "System clock synchronized: yes").`,
      );
    }
  }
  return out;
}
