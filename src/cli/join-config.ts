// One identity store per state dir, and the config file `join` writes. `id create` records beside
// an identity where its certificate came from (the access point URL and the CA it trusted), so
// `join` and `run` reach the same network without the URL typed again; `addJoinToConfig` creates
// or extends a config file with everything `run` needs for one identity and one group. The CLI's
// `join` and the OpenClaw setup flow call the same functions.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseChannelConfig } from "../config/load.ts";
import { aidDomain } from "../network/access-point.ts";
import { identityPaths } from "../network/identity-store.ts";
import { writeFileAtomicSync } from "../state/atomic-file.ts";

/** Where an identity's certificate came from; written by `id create` next to the identity. */
export interface IdentityAccess {
  accessPointUrl: string;
  caFile?: string;
}

const accessFile = (stateDir: string, aid: string) => resolve(identityPaths({ aid, stateDir }).dir, "access-point.json");

export function recordIdentityAccess(stateDir: string, aid: string, access: IdentityAccess): void {
  writeFileAtomicSync(accessFile(stateDir, aid), JSON.stringify({ accessPointUrl: access.accessPointUrl, ...(access.caFile ? { caFile: resolve(access.caFile) } : {}) }, null, 2) + "\n");
}

/** What `id create` recorded for the identity; undefined when nothing (or nothing readable) was. */
export function readIdentityAccess(stateDir: string, aid: string): IdentityAccess | undefined {
  const file = accessFile(stateDir, aid);
  if (!existsSync(file)) return undefined;
  try {
    const raw = JSON.parse(readFileSync(file, "utf8")) as { accessPointUrl?: unknown; caFile?: unknown };
    if (typeof raw.accessPointUrl !== "string") return undefined;
    return { accessPointUrl: raw.accessPointUrl, ...(typeof raw.caFile === "string" ? { caFile: raw.caFile } : {}) };
  } catch {
    return undefined;
  }
}

export interface JoinConfigEntry {
  /** The identity's key in `identities` (default: the config's identity with this aid, else the aid's first label). */
  identityId?: string;
  aid: string;
  groupId: string;
  /** The access point the group lives on (`<ap>` of `group.<ap>`). */
  groupAccessPoint: string;
  /** Written when it differs from https://acp3.<the aid's domain>. */
  accessPointUrl?: string;
  caFile?: string;
  stateDir?: string;
}

export interface JoinConfigResult {
  identityId: string;
  created: boolean;
  /** What was added, one phrase each (`identity dave (dave.example)`, `group lobby`, …); empty when nothing was. */
  added: string[];
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Creates `file` when missing, or adds to it, what `run` needs for one identity in one group.
 * Existing settings are kept as they are; the result is checked as a config before it is written
 * (atomically), so a file `join` writes always loads.
 */
export function addJoinToConfig(file: string, entry: JoinConfigEntry): JoinConfigResult {
  const created = !existsSync(file);
  const raw: Plain = created ? {} : (JSON.parse(readFileSync(file, "utf8")) as Plain);
  if (!isPlain(raw)) throw new Error(`${file}: expected a JSON object`);
  const added: string[] = [];
  const identities = isPlain(raw.identities) ? raw.identities : (raw.identities = {});
  const home = aidDomain(entry.aid);
  let identityId =
    entry.identityId ?? Object.entries(identities).find(([, v]) => isPlain(v) && typeof v.aid === "string" && v.aid.toLowerCase() === entry.aid.toLowerCase())?.[0];
  if (identityId === undefined) {
    const label = entry.aid.slice(0, entry.aid.indexOf("."));
    identityId = label in identities ? entry.aid : label;
  }
  if (!isPlain(identities[identityId])) {
    const defaultUrl = `https://acp3.${home}`;
    identities[identityId] = { aid: entry.aid, ...(entry.accessPointUrl && entry.accessPointUrl.replace(/\/+$/, "") !== defaultUrl ? { accessPointUrl: entry.accessPointUrl } : {}) };
    added.push(`identity ${identityId} (${entry.aid})`);
  }
  const groups = isPlain(raw.groups) ? raw.groups : (raw.groups = {});
  if (!isPlain(groups[entry.groupId])) {
    groups[entry.groupId] = entry.groupAccessPoint.toLowerCase() === home.toLowerCase() ? {} : { accessPoint: entry.groupAccessPoint };
    added.push(`group ${entry.groupId}`);
  }
  // A group `leave` turned off for this identity is on again.
  const mine = identities[identityId] as Plain;
  const own = isPlain(mine.groups) ? mine.groups : undefined;
  const left = own?.[entry.groupId];
  if (isPlain(left) && left.enabled === false) {
    delete left.enabled;
    added.push(`group ${entry.groupId} on again for ${identityId}`);
  }
  if (entry.caFile) {
    const network = isPlain(raw.network) ? raw.network : (raw.network = {});
    if (network.caFile === undefined) {
      network.caFile = resolve(entry.caFile);
      added.push(`network.caFile ${network.caFile}`);
    }
  }
  if (entry.stateDir && raw.stateDir === undefined) {
    raw.stateDir = resolve(entry.stateDir);
    added.push(`stateDir ${raw.stateDir}`);
  }
  parseChannelConfig(raw, { source: file });
  // A config is where secrets live (llm.apiKey, network.seedPassword): the atomic write creates
  // its temp file 0600, so the rename never leaves the config readable by others. Only what was
  // read from the file itself is written back: no secret from the environment is ever copied in.
  if (added.length > 0) writeFileAtomicSync(resolve(file), JSON.stringify(raw, null, 2) + "\n");
  return { identityId, created: created && added.length > 0, added };
}
