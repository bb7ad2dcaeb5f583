// Joining a group by its link (`https://group.<ap>/<group>?code=<invite>`): with an invite code it
// sends `use_invite_code`; without one `request_join` (the group's owner decides). The identity
// signs in as the runtime does. `acp-group join`, `acp-group chat` and the OpenClaw setup flow use it.
import { createGroupConnection } from "../transport/connection.ts";
import { TransportError } from "../transport/errors.ts";
import type { ChannelConfig, Logger } from "../types.ts";
import { RuntimeError } from "./identity.ts";
import { connectConfiguredIdentity } from "./link.ts";

/** A link that is not `https://group.<ap>/<group>[?code=<invite>]`; the message names what is wrong. */
export class JoinLinkError extends Error {
  readonly code = "BAD_JOIN_LINK";
}

export interface JoinLink {
  /** `group.<ap>`: the group service agent to open a session with. */
  service: string;
  accessPoint: string;
  groupId: string;
  code: string | undefined;
}

/** Parses `https://group.<ap>/<group>?code=<invite>`; throws JoinLinkError naming what is wrong. */
export function parseLink(link: string): JoinLink {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new JoinLinkError(`expected a link such as https://group.agentcp.io/<group>?code=<invite>, got \`${link}\``);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new JoinLinkError(`expected an https:// link, got \`${link}\``);
  const host = url.hostname.toLowerCase();
  if (!/^group\.[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(host)) throw new JoinLinkError(`expected the link's host to be group.<access point>, got \`${host}\``);
  const groupId = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, ""));
  if (groupId === "" || groupId.includes("/")) throw new JoinLinkError(`expected the link's path to be the group id, got \`${url.pathname}\``);
  const code = url.searchParams.get("code") ?? undefined;
  return { service: host, accessPoint: host.slice("group.".length), groupId, code: code === "" ? undefined : code };
}

/** Signs in, opens the session with the link's group service and joins (invite code) or asks to (request_join). Returns the status. */
export async function joinByLink(p: {
  config: ChannelConfig;
  identityId: string;
  target: JoinLink;
  message?: string | undefined;
  timeoutMs: number;
  logger: Logger;
  /** The sign-in's `client_info` (`acp-group chat` joins as a person's client). */
  clientInfo?: string;
}): Promise<string> {
  const { config, target, logger } = p;
  const identity = config.identities[p.identityId]!;
  const agent = connectConfiguredIdentity({ config, identityId: p.identityId, logger, ...(p.clientInfo !== undefined ? { clientInfo: p.clientInfo } : {}) });
  // No groups to feed: this connection only registers and asks.
  const connection = createGroupConnection({ channel: agent.channel(target.service), aid: identity.aid, groups: [], getCursor: () => 0, onMessages: () => {}, logger });
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no session with ${target.service} within ${p.timeoutMs} ms`)), p.timeoutMs);
    });
    try {
      // A refused identity fails at once; otherwise wait for the session to come up.
      await Promise.race([agent.ready.then(() => connection.start()), timeout]);
    } finally {
      clearTimeout(timer);
    }
    const action = target.code ? "use_invite_code" : "request_join";
    const params = target.code ? { code: target.code } : p.message ? { message: p.message } : {};
    let data: unknown;
    try {
      data = await connection.request(action, { groupId: target.groupId, params });
    } catch (err) {
      if (err instanceof TransportError && err.context.resultCode === 1005) data = { status: "member" };
      else throw err;
    }
    return data && typeof data === "object" && typeof (data as { status?: unknown }).status === "string" ? (data as { status: string }).status : "joined";
  } finally {
    await connection.close();
    await agent.close();
  }
}

/**
 * Joins the group of `link` with a configured identity (the OpenClaw setup flow's entry): the
 * status `joinByLink` returns — `joined`, `member`, `pending` or what the group service said — and
 * the parsed link. Throws when sign-in or the request fails.
 */
export async function joinGroupByLink(p: { config: ChannelConfig; identityId: string; link: string; logger: Logger; timeoutMs?: number; message?: string }): Promise<{ status: string; target: JoinLink }> {
  const target = parseLink(p.link);
  if (!p.config.identities[p.identityId]) throw new RuntimeError("IDENTITY_UNKNOWN", p.identityId, `no identity \`${p.identityId}\` in the config`);
  const status = await joinByLink({ config: p.config, identityId: p.identityId, target, message: p.message, timeoutMs: p.timeoutMs ?? 30_000, logger: p.logger });
  return { status, target };
}
