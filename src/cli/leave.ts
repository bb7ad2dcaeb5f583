// `acp-group leave <group|link> --identity AID`: the identity leaves the group (the group
// service's `leave_group`, as the official SDK's leaveGroup), and with `--config FILE` the
// group is turned off for that identity in the file (`identities.<id>.groups.<group>.enabled:
// false`, its settings kept), so `run` no longer takes it up. `join` turns it on again.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadConfigFile, parseChannelConfig } from "../config/load.ts";
import { createJsonLogger } from "../log.ts";
import { aidDomain, groupServiceAid } from "../network/access-point.ts";
import { leaveGroup } from "../runtime/leave.ts";
import { defaultStateDir } from "../state/file-store.ts";
import { writeFileAtomicSync } from "../state/atomic-file.ts";
import type { LogLevel } from "../types.ts";
import { intOption, parse, UsageError, type Io } from "./args.ts";
import { identityForLink, parseJoinLink } from "./join.ts";

export async function leaveCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    identity: { type: "string" },
    config: { type: "string" },
    "state-dir": { type: "string" },
    "ca-file": { type: "string" },
    "timeout-ms": { type: "string" },
    "log-level": { type: "string" },
  }, true);
  const [where, ...extra] = positionals;
  if (!where || extra.length > 0) throw new UsageError("expected one group id (or its link https://group.<ap>/<group>)");
  if (!values.identity) throw new UsageError("expected `--identity AID` (an aid from `acp-group id create`, or an identity of the config)");
  const timeoutMs = intOption(values["timeout-ms"], "timeout-ms", 1) ?? 30_000;
  if (values.config && !existsSync(values.config)) throw new UsageError(`no config file ${values.config}`);
  const loaded = values.config ? loadConfigFile(values.config) : parseChannelConfig({});
  const stateDir = values["state-dir"] ?? loaded.stateDir ?? defaultStateDir();
  const who = identityForLink({ config: loaded, identity: values.identity, stateDir, caFile: values["ca-file"] });
  let service: string;
  let groupId: string;
  if (/^https?:\/\//i.test(where)) {
    const link = parseJoinLink(where);
    service = link.service;
    groupId = link.groupId;
  } else {
    groupId = where;
    // The group's own access point when the config names one, else the identity's.
    const ap = loaded.identities[who.identityId]?.groups[where]?.accessPoint ?? loaded.groups[where]?.accessPoint ?? aidDomain(who.aid);
    service = groupServiceAid(ap.replace(/:\d+$/, ""));
  }
  const logger = createJsonLogger({ level: (values["log-level"] ?? "warn") as LogLevel, write: (line) => io.err(line) });
  const status = await leaveGroup({ config: who.config, identityId: who.identityId, service, groupId, timeoutMs, logger });
  io.out(`${who.aid} → ${groupId} on ${service}: ${status === "left" ? "left" : "not a member (nothing to leave)"}`);
  if (values.config) {
    const changed = markLeftInConfig(values.config, who.identityId, groupId);
    io.out(changed ? `updated ${values.config}: ${groupId} off for ${who.identityId} (\`join\` turns it on again)` : `${values.config} does not run ${groupId} for ${who.identityId}: unchanged`);
  }
  return 0;
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Turns `groupId` off for the identity in `file` (`identities.<id>.groups.<group>.enabled: false`,
 * other settings kept) when the file runs it for that identity. True when the file changed.
 * The result is checked as a config before it is written (atomically, 0600 as every config).
 */
export function markLeftInConfig(file: string, identityId: string, groupId: string): boolean {
  const raw = JSON.parse(readFileSync(file, "utf8")) as unknown;
  if (!isPlain(raw)) throw new Error(`${file}: expected a JSON object`);
  const identities = isPlain(raw.identities) ? raw.identities : {};
  const identity = identities[identityId];
  if (!isPlain(identity)) return false;
  const global = isPlain(raw.groups) ? raw.groups : {};
  const own = isPlain(identity.groups) ? identity.groups : undefined;
  const entry = own?.[groupId];
  if (!isPlain(global[groupId]) && !isPlain(entry)) return false;
  if (isPlain(entry) && entry.enabled === false) return false;
  const groups = own ?? (identity.groups = {});
  groups[groupId] = { ...(isPlain(entry) ? entry : {}), enabled: false };
  parseChannelConfig(raw, { source: file });
  writeFileAtomicSync(resolve(file), JSON.stringify(raw, null, 2) + "\n");
  return true;
}
