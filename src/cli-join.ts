// `acp-group join <link> --identity <id>`: joins a group by its link. With an invite code
// (`https://group.<ap>/<group>?code=<invite>`) it sends `use_invite_code`; without one it sends
// `request_join` (the group's owner decides). The identity signs in as the runtime does.
import { loadConfigFile } from "./config/load.ts";
import { intOption, parse, UsageError } from "./cli-args.ts";
import { createJsonLogger } from "./log.ts";
import { connectConfiguredIdentity } from "./runtime-link.ts";
import { defaultStateDir } from "./state/file-store.ts";
import { createGroupConnection } from "./transport/connection.ts";
import { TransportError } from "./transport/errors.ts";
import type { ChannelConfig, Logger, LogLevel } from "./types.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

export interface JoinLink {
  /** `group.<ap>`: the group service agent to open a session with. */
  service: string;
  accessPoint: string;
  groupId: string;
  code: string | undefined;
}

/** Parses `https://group.<ap>/<group>?code=<invite>`; throws UsageError naming what is wrong. */
export function parseJoinLink(link: string): JoinLink {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new UsageError(`expected a link such as https://group.agentcp.io/<group>?code=<invite>, got \`${link}\``);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError(`expected an https:// link, got \`${link}\``);
  const host = url.hostname.toLowerCase();
  if (!/^group\.[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(host)) throw new UsageError(`expected the link's host to be group.<access point>, got \`${host}\``);
  const groupId = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, ""));
  if (groupId === "" || groupId.includes("/")) throw new UsageError(`expected the link's path to be the group id, got \`${url.pathname}\``);
  const code = url.searchParams.get("code") ?? undefined;
  return { service: host, accessPoint: host.slice("group.".length), groupId, code: code === "" ? undefined : code };
}

export async function joinCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    identity: { type: "string" },
    config: { type: "string" },
    message: { type: "string" },
    "state-dir": { type: "string" },
    "timeout-ms": { type: "string" },
    "log-level": { type: "string" },
  }, true);
  const [link, ...extra] = positionals;
  if (!link || extra.length > 0) throw new UsageError("expected exactly one link");
  if (!values.identity) throw new UsageError("expected `--identity ID` (an identity of the config)");
  if (!values.config) throw new UsageError("expected `--config FILE` (the config naming the identity)");
  const target = parseJoinLink(link);
  const loaded = loadConfigFile(values.config);
  const config = { ...loaded, stateDir: values["state-dir"] ?? loaded.stateDir ?? defaultStateDir() };
  const identity = config.identities[values.identity];
  if (!identity) throw new UsageError(`no identity \`${values.identity}\` in the config (have: ${Object.keys(config.identities).join(", ") || "none"})`);
  const logger = createJsonLogger({ level: (values["log-level"] ?? "warn") as LogLevel, write: (line) => io.err(line) });
  const timeoutMs = intOption(values["timeout-ms"], "timeout-ms", 1) ?? 30_000;
  const { status } = await joinGroupByLink({ config, identityId: values.identity, link, logger, timeoutMs, ...(values.message ? { message: values.message } : {}) });
  io.out(`${identity.aid} → ${target.groupId} on ${target.service}: ${status}`);
  if (status !== "pending") {
    const home = target.accessPoint === identity.aid.slice(identity.aid.indexOf(".") + 1);
    io.out(`to chat there, add to the config: "groups": { "${target.groupId}": ${home ? "{}" : `{ "accessPoint": "${target.accessPoint}" }`} }`);
  }
  return status === "pending" || status === "joined" || status === "member" ? 0 : 1;
}

/**
 * Signs the configured identity in and joins the group of `link` (invite code → `use_invite_code`,
 * else `request_join`). `status`: `joined`, `member` (already), `pending` (the owner decides) or
 * what the group service said. Throws when sign-in or the request fails.
 */
export async function joinGroupByLink(p: { config: ChannelConfig; identityId: string; link: string; logger: Logger; timeoutMs?: number; message?: string }): Promise<{ status: string; target: JoinLink }> {
  const target = parseJoinLink(p.link);
  const identity = p.config.identities[p.identityId];
  if (!identity) throw new UsageError(`no identity \`${p.identityId}\` in the config`);
  const logger = p.logger;
  const agent = connectConfiguredIdentity({ config: p.config, identityId: p.identityId, logger });
  // No groups to feed: this connection only registers and asks.
  const connection = createGroupConnection({ channel: agent.channel(target.service), aid: identity.aid, groups: [], getCursor: () => 0, onMessages: () => {}, logger });
  try {
    const timeoutMs = p.timeoutMs ?? 30_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no session with ${target.service} within ${timeoutMs} ms`)), timeoutMs);
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
    const status = data && typeof data === "object" && typeof (data as { status?: unknown }).status === "string" ? (data as { status: string }).status : "joined";
    return { status, target };
  } finally {
    await connection.close();
    await agent.close();
  }
}
