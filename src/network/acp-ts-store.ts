// Identities where the official TypeScript SDK (acp-ts) keeps them, as the evol channel and other
// SDK users leave them: a storage folder (evol: ~/.acp-storage; the SDK's own default: ~/acp)
// holding `AIDs/<aid>/private/<aid>.key` (PKCS#8 under sha256-hex of the seed password, which the
// SDK leaves at "" unless given one), `private/<aid>.csr`, `public/<aid>.crt`, and the groups the
// SDK's group store saw, `AIDs/<aid>/groups/_index.json` ([{ groupId, groupName, targetAid }]).
// Read-only: nothing here writes into the SDK's folder.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { NetworkError } from "./errors.ts";
import { openPrivateKey, storeIdentity, type Identity, type KeyProtection } from "./identity-store.ts";
import { normalizePem } from "./x509.ts";

/** Where acp-ts identities are looked for by default: evol's storage, then the SDK's own default. */
export function defaultAcpTsStorageDirs(home: string = homedir()): string[] {
  return [join(home, ".acp-storage"), join(home, "acp")];
}

export interface AcpTsIdentity {
  aid: string;
  /** `<storage>/AIDs/<aid>`: private/ and public/ inside. */
  dir: string;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/**
 * The identities under `dir`, which may be a storage folder (with AIDs/), an AIDs folder, or one
 * identity's folder. As the SDK lists them: a folder counts when it holds both the key and the
 * certificate named after it.
 */
export function findAcpTsIdentities(dir: string): AcpTsIdentity[] {
  const complete = (d: string) => {
    const aid = basename(d);
    return existsSync(join(d, "private", `${aid}.key`)) && existsSync(join(d, "public", `${aid}.crt`));
  };
  if (isDir(join(dir, "private")) && complete(dir)) return [{ aid: basename(dir), dir }];
  const aids = isDir(join(dir, "AIDs")) ? join(dir, "AIDs") : dir;
  if (!isDir(aids)) return [];
  return readdirSync(aids, { withFileTypes: true })
    .filter((e) => e.isDirectory() && complete(join(aids, e.name)))
    .map((e) => ({ aid: e.name, dir: join(aids, e.name) }))
    .sort((a, b) => a.aid.localeCompare(b.aid));
}

export interface AcpTsGroup {
  groupId: string;
  groupName: string;
  /** The group service, `group.<access point>`. */
  targetAid: string;
}

/** The groups the SDK's group store recorded for this identity (none when it kept no index). */
export function readAcpTsGroups(identity: AcpTsIdentity): AcpTsGroup[] {
  const file = join(identity.dir, "groups", "_index.json");
  if (!existsSync(file)) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const out: AcpTsGroup[] = [];
  for (const r of raw as Array<Record<string, unknown>>) {
    if (typeof r?.groupId !== "string" || r.groupId === "") continue;
    out.push({ groupId: r.groupId, groupName: typeof r.groupName === "string" ? r.groupName : "", targetAid: typeof r.targetAid === "string" ? r.targetAid : "" });
  }
  return out;
}

/** How the imported key is stored, for the report. */
export type ImportedProtection =
  /** Encrypted with the seed password the caller gave for our store. */
  | "seed-password"
  /** Kept under the same seed password that opened it in the SDK's folder (ACP_SEED_PASSWORD must be that one to run it). */
  | "source-seed-password"
  /** As the SDK stored it by default: under the empty seed password, which opens it without one. */
  | "sdk-default-seed";

export interface ImportedAcpTsIdentity {
  identity: Identity;
  protection: ImportedProtection;
  /** The seed password that opened the SDK's key ("" for the SDK's default). */
  openedWith: string;
}

/**
 * Copies one acp-ts identity into the state dir's store. The key is opened with the first of
 * `seedPasswords` that works (the SDK's default "" is always tried last), checked against its
 * certificate (storeIdentity refuses a pair that does not belong together), and stored encrypted with `storeSeedPassword` when given, else under the same
 * password that opened it (the SDK's default empty one included). Never writes into the SDK's folder.
 */
export function importAcpTsIdentity(p: { stateDir: string; from: AcpTsIdentity; seedPasswords: ReadonlyArray<string | undefined>; storeSeedPassword?: string | undefined }): ImportedAcpTsIdentity {
  const { aid, dir } = p.from;
  const keyFile = join(dir, "private", `${aid}.key`);
  const pem = readFileSync(keyFile, "utf8");
  let opened: { key: ReturnType<typeof openPrivateKey>["key"]; seed: string } | undefined;
  for (const seed of [...new Set(p.seedPasswords.filter((s): s is string => typeof s === "string" && s !== ""))]) {
    const tried = tryOpen(aid, pem, seed, keyFile);
    if (tried) {
      opened = { key: tried.key, seed: tried.sdkDefaultSeed ? "" : seed };
      break;
    }
  }
  opened ??= { key: openPrivateKey({ aid, pem, file: keyFile }).key, seed: "" };
  const certPem = normalizePem(readFileSync(join(dir, "public", `${aid}.crt`), "utf8"));
  const csrFile = join(dir, "private", `${aid}.csr`);
  const protection: KeyProtection = p.storeSeedPassword ? { seedPassword: p.storeSeedPassword } : opened.seed ? { seedPassword: opened.seed } : { sdkDefaultSeed: true };
  const identity = storeIdentity({ stateDir: p.stateDir, aid, privateKey: opened.key, certPem, ...(existsSync(csrFile) ? { csr: readFileSync(csrFile, "utf8") } : {}), protection });
  return { identity, protection: p.storeSeedPassword ? "seed-password" : opened.seed ? "source-seed-password" : "sdk-default-seed", openedWith: opened.seed };
}

function tryOpen(aid: string, pem: string, seed: string, file: string): ReturnType<typeof openPrivateKey> | undefined {
  try {
    return openPrivateKey({ aid, pem, seedPassword: seed, file });
  } catch (err) {
    if (err instanceof NetworkError && err.code === "IDENTITY_LOCKED") return undefined;
    throw err;
  }
}
