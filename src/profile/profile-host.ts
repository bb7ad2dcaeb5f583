// Which hosts an agent.md request may go to. An aid is a host name (`https://<aid>/agent.md`), and
// aids reach us from the wire — a group service names senders — so an aid shaped like
// `127.0.0.1:8080/admin?` would turn a profile lookup into a request of someone else's choosing.
// Only host-name-shaped aids are requested, and (unless the requests go to a configured server)
// only when their name resolves to public addresses. Pure except the DNS wrapper at the end.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

// A DNS label: letters, digits and inner hyphens, 1–63 characters. The last label (the top-level
// domain) starts with a letter, so no dotted or numeric IPv4 form ("127.1", "a.0x7f") passes.
// The first label is the agent's name: networks issue names with `_` too ("my_bot.acp.local").
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const NAME_LABEL = /^[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?$/i;
const TOP_LABEL = /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** True when `aid` is a host name and nothing else: two or more labels, no port, path, query, userinfo or IP literal. */
export function isFetchableAid(aid: string): boolean {
  if (aid.length === 0 || aid.length > 253) return false;
  const labels = aid.split(".");
  if (labels.length < 2) return false;
  const top = labels.pop()!;
  return TOP_LABEL.test(top) && labels.every((l, i) => (i === 0 ? NAME_LABEL : LABEL).test(l));
}

// Everything that is not the public internet: "this" network, private (RFC 1918), shared
// (CGNAT), loopback, link-local (cloud metadata lives at 169.254.169.254), IETF and benchmarking
// ranges, multicast and reserved; for IPv6 also unique-local, link-local, old site-local,
// multicast, and the forms that carry an IPv4 address to a translator or tunnel (IPv4-compatible,
// NAT64 including its local-use range, 6to4): an AAAA record could wrap 10.0.0.1 or 127.0.0.1 in
// any of them (IPv4-mapped ones are refused below).
const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 96],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["2002::", 16],
  ["fec0::", 10],
  ["100::", 64],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, "ipv6");

/** True for a literal IPv4/IPv6 address on the public internet; false for anything else, garbage included. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // IPv4 wrapped in IPv6 (::ffff:a.b.c.d, in any spelling): never a real profile host.
  if (family === 6 && (address.includes("%") || new URL(`http://[${address}]/`).hostname.startsWith("[::ffff:"))) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** A profile request was not made: the host is not a well-formed aid, or it resolved to a non-public address. */
export class ProfileHostRefused extends Error {
  readonly code = "PROFILE_HOST_REFUSED";
  readonly host: string;
  readonly address: string | undefined;
  constructor(host: string, address?: string) {
    super(address === undefined ? `not a host name: ${JSON.stringify(host)}` : `${host} resolves to a non-public address (${address})`);
    this.name = "ProfileHostRefused";
    this.host = host;
    this.address = address;
  }
}

type AllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

/**
 * A `lookup` for sockets that resolves as `base` (default: the system's DNS) and refuses a name
 * with any non-public address. The check is on the address the socket then connects to, so a
 * name that resolves differently the second time (DNS rebinding) gains nothing.
 */
export function publicOnlyLookup(base?: LookupFunction): LookupFunction {
  const resolve = (base ?? (dnsLookup as unknown as LookupFunction)) as (host: string, options: object, cb: AllCallback) => void;
  return ((hostname: string, options: { all?: boolean } & object, callback: (...args: unknown[]) => void) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const list = Array.isArray(addresses) ? addresses : [];
      const bad = list.find((a) => !isPublicAddress(a.address));
      if (bad !== undefined || list.length === 0) return callback(new ProfileHostRefused(hostname, bad?.address ?? ""));
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  }) as LookupFunction;
}
