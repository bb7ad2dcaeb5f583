// `acp-group id create | list | show | import`: identities on disk, in the official SDK's layout.
import { ID_HELP } from "./id-help.ts";
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parse, UsageError, type Io } from "./args.ts";
import { loadConfigFile } from "../config/load.ts";
import type { ChannelConfig } from "../types.ts";
import { recordIdentityAccess } from "./join-config.ts";
import { resolveSeedPassword } from "../config/secret-ref.ts";
import { defaultStateDir } from "../state/file-store.ts";
import { accessPointUrlFor, createIdentity, importIdentity, listIdentities, loadIdentity, summarizeCertificate, type CertificateSummary, type TlsOptions } from "../network/index.ts";
import { checkCertificateExpiry, identityPaths } from "../network/identity-store.ts";
import { NetworkError } from "../network/errors.ts";
import { findAcpTsIdentities, importAcpTsIdentity } from "../network/acp-ts-store.ts";
import { describeProfile, describePublishedProfile, findPublishedProfile, readPublishedProfile } from "../profile/profile-sync.ts";

export const ID_USAGE = `Usage: acp-group id <create|renew|list|show|import> [options]\n\n${ID_HELP}`;

const COMMON = {
  "state-dir": { type: "string" },
  config: { type: "string" },
  json: { type: "boolean" },
  "no-passphrase": { type: "boolean" },
  ap: { type: "string" },
  "ap-url": { type: "string" },
  "ca-file": { type: "string" },
  "insecure-tls": { type: "boolean" },
  key: { type: "string" },
  cert: { type: "string" },
  aid: { type: "string" },
  "sdk-dir": { type: "string" },
  "from-acp-ts": { type: "string" },
  "seed-password": { type: "string" },
} as const;

function certLines(summary: CertificateSummary, status: string): string[] {
  return [
    `subject:     ${summary.subject}`,
    `issuer:      ${summary.issuer}`,
    `valid:       ${summary.validFrom.toISOString()} → ${summary.validTo.toISOString()} (${status})`,
    `fingerprint: SHA256 ${summary.fingerprint256}`,
    `serial:      ${summary.serialNumber}`,
  ];
}

function statusOf(certPem: string, now: number): string {
  const c = checkCertificateExpiry({ certPem, now });
  return c.reason === "valid" ? `valid, ${c.daysLeft} days left` : c.reason === "expiring-soon" ? `EXPIRES in ${c.daysLeft} days` : c.reason === "expired" ? "EXPIRED" : "NOT YET VALID";
}

export async function idCommand(args: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [sub, ...rest] = args;
  // `--help` is answered by the command table (cli/index.ts) before this runs.
  if (sub === undefined || sub === "help") {
    io.out(ID_USAGE);
    return sub === undefined ? 2 : 0;
  }
  const { values, positionals } = parse(rest, COMMON, true);
  const config = values.config ? loadConfigFile(values.config) : undefined;
  const stateDir = values["state-dir"] ?? config?.stateDir ?? defaultStateDir(env);
  // The environment first here (a command-line habit); the config's value may be a reference.
  const seedPassword = env.ACP_SEED_PASSWORD || (config ? resolveSeedPassword(config.network, env) : undefined);
  const now = Date.now();
  switch (sub) {
    case "create": {
      const [aid, extra] = positionals;
      if (!aid || extra !== undefined) throw new UsageError("expected `id create <aid>`");
      if (values.ap && values["ap-url"]) throw new UsageError("`--ap` and `--ap-url` exclude each other");
      const tls = tlsFromFlags(values, config, io);
      const accessPointUrl = accessPointUrlFor({ aid, accessPoint: values.ap, accessPointUrl: values["ap-url"] });
      let identity;
      try {
        identity = await createIdentity({ aid, stateDir, accessPointUrl, seedPassword, noPassphrase: values["no-passphrase"] === true, tls });
      } catch (err) {
        if (!(err instanceof NetworkError) || err.code !== "CERT_REFUSED") throw err;
        // The embedded network of `start`/`server` on this state dir registered the aid already:
        // its key is in the same store, one folder down. Reuse it rather than fight over the name.
        const demo = identityPaths({ aid, stateDir: join(stateDir, "local-network") });
        if (existsSync(demo.key) && existsSync(demo.cert)) {
          const reused = importIdentity({ stateDir, aid, keyFile: demo.key, certFile: demo.cert, seedPassword, noPassphrase: values["no-passphrase"] === true });
          recordIdentityAccess(stateDir, aid, { accessPointUrl, ...(tls.caFile ? { caFile: tls.caFile } : {}) });
          io.out(`reused ${aid}: ${accessPointUrl} has it registered already, to the key the local network of this state dir made (${demo.dir})`);
          io.out(`folder:      ${reused.dir}`);
          for (const line of certLines(summarizeCertificate(reused.certPem), statusOf(reused.certPem, now))) io.out(line);
          return 0;
        }
        if (err.status === 409) {
          throw new Error(`${aid} is already registered at ${accessPointUrl} to another key: choose another name, or bring the key that owns it with \`acp-group id import\``);
        }
        throw err;
      }
      // `join` and `chat` reach the same network from this record, without the URL typed again.
      recordIdentityAccess(stateDir, aid, { accessPointUrl, ...(tls.caFile ? { caFile: tls.caFile } : {}) });
      const s = summarizeCertificate(identity.certPem);
      io.out(`created ${aid} (certificate from ${accessPointUrl})`);
      io.out(`folder:      ${identity.dir}${seedPassword ? " (key encrypted with the seed password)" : " (key NOT encrypted)"}`);
      for (const line of certLines(s, statusOf(identity.certPem, now))) io.out(line);
      return 0;
    }
    case "renew": {
      // An expired (or soon expiring) certificate: the same key certified again, so the aid keeps its key.
      const [aid, extra] = positionals;
      if (!aid || extra !== undefined) throw new UsageError("expected `id renew <aid>`");
      if (values.ap && values["ap-url"]) throw new UsageError("`--ap` and `--ap-url` exclude each other");
      const tls = tlsFromFlags(values, config, io);
      const old = loadIdentity({ aid, stateDir, seedPassword });
      const accessPointUrl = accessPointUrlFor({ aid, accessPoint: values.ap, accessPointUrl: values["ap-url"] });
      // A key that opened without a password was stored unencrypted: it stays so.
      const identity = await createIdentity({ aid, stateDir, accessPointUrl, seedPassword, noPassphrase: seedPassword === undefined, tls, privateKey: old.privateKey, overwrite: true });
      io.out(`renewed ${aid} (same key, certificate from ${accessPointUrl})`);
      for (const line of certLines(summarizeCertificate(identity.certPem), statusOf(identity.certPem, now))) io.out(line);
      return 0;
    }
    case "list": {
      // One store per state dir: the identities `start` / `server` made for their local network live one folder down.
      const local = basename(stateDir) === "local-network" ? [] : listIdentities(join(stateDir, "local-network")).map((l) => ({ ...l, local: true }));
      const list = [...listIdentities(stateDir).map((l) => ({ ...l, local: false })), ...local];
      if (values.json) {
        io.out(JSON.stringify(list));
        return 0;
      }
      if (list.length === 0) {
        io.out(`no identities in ${stateDir}/identities (create one with \`acp-group id create <aid>\`)`);
        return 0;
      }
      for (const l of list) {
        const where = l.local ? "  (local network)" : "";
        io.out(l.certificate ? `${l.aid}  ${l.certificate.validTo.toISOString().slice(0, 10)}  ${statusOf(readCert(l.dir, l.aid), now)}  issuer: ${l.certificate.issuer}${where}` : `${l.aid}  (unreadable: ${l.problem})${where}`);
      }
      return 0;
    }
    case "show": {
      const [aid] = positionals;
      if (!aid) throw new UsageError("expected `id show <aid>`");
      const own = identityPaths({ aid, stateDir });
      const demo = identityPaths({ aid, stateDir: join(stateDir, "local-network") });
      const paths = !existsSync(own.cert) && existsSync(demo.cert) ? demo : own;
      const certPem = readCert(paths.dir, aid);
      const s = summarizeCertificate(certPem);
      // Opening the key proves the seed password and the key/certificate pair; not fatal for `show`.
      let key = "key opens and matches the certificate";
      try {
        loadIdentity({ aid, identityDir: paths.dir, seedPassword });
      } catch (err) {
        key = (err as Error).message;
      }
      // What is published: by the config's identity of this aid when a config is given, else any identity in the state dir.
      const configured = Object.entries(config?.identities ?? {}).find(([, i]) => i.aid.toLowerCase() === aid.toLowerCase());
      // `start` keeps the local network's identities in <state>/local-network and records publishes in <state>.
      const published = configured
        ? readPublishedProfile(stateDir, configured[0])
        : (findPublishedProfile(stateDir, aid) ?? (basename(stateDir) === "local-network" ? findPublishedProfile(dirname(stateDir), aid) : undefined));
      const profile = configured ? describePublishedProfile({ stateDir, identityId: configured[0], identity: configured[1] }) : describeProfile(published);
      if (values.json) {
        io.out(JSON.stringify({ aid, ...paths, certificate: s, status: statusOf(certPem, now), key, agentMd: published ?? null }));
        return 0;
      }
      io.out(`aid:         ${aid}`);
      for (const line of certLines(s, statusOf(certPem, now))) io.out(line);
      io.out(`key:         ${paths.key} (${key})`);
      io.out(`certificate: ${paths.cert}`);
      io.out(profile);
      return 0;
    }
    case "import": {
      if (values["from-acp-ts"] !== undefined) return importFromAcpTs({ dir: values["from-acp-ts"], aids: positionals.length > 0 ? positionals : values.aid ? [values.aid] : [], stateDir, seedPassword: values["seed-password"], env, io, now });
      if (!values["sdk-dir"] && !(values.key && values.cert)) throw new UsageError("expected `--key FILE --cert FILE`, `--sdk-dir DIR` or `--from-acp-ts DIR`");
      const identity = importIdentity({
        stateDir,
        ...(values.aid ? { aid: values.aid } : {}),
        ...(values.key ? { keyFile: values.key } : {}),
        ...(values.cert ? { certFile: values.cert } : {}),
        ...(values["sdk-dir"] ? { sdkDir: values["sdk-dir"] } : {}),
        seedPassword,
        noPassphrase: values["no-passphrase"] === true,
      });
      io.out(`imported ${identity.aid} into ${identity.dir}`);
      for (const line of certLines(summarizeCertificate(identity.certPem), statusOf(identity.certPem, now))) io.out(line);
      return 0;
    }
    default:
      throw new UsageError(`unknown id command \`${sub}\``);
  }
}

/** `id import --from-acp-ts DIR`: every identity the official SDK keeps there (or the named ones). */
function importFromAcpTs(p: { dir: string; aids: string[]; stateDir: string; seedPassword: string | undefined; env: NodeJS.ProcessEnv; io: Io; now: number }): number {
  const found = findAcpTsIdentities(p.dir);
  if (found.length === 0) throw new UsageError(`no acp-ts identity in ${p.dir} (expected AIDs/<aid>/private/<aid>.key and public/<aid>.crt)`);
  const wanted = p.aids.map((a) => a.toLowerCase());
  const picked = wanted.length > 0 ? found.filter((f) => wanted.includes(f.aid.toLowerCase())) : found;
  const absent = p.aids.filter((a) => !found.some((f) => f.aid.toLowerCase() === a.toLowerCase()));
  if (absent.length > 0) throw new UsageError(`${absent.join(", ")}: not in ${p.dir} (have: ${found.map((f) => f.aid).join(", ")})`);
  const storeSeed = p.env.ACP_SEED_PASSWORD || undefined;
  for (const from of picked) {
    const r = importAcpTsIdentity({ stateDir: p.stateDir, from, seedPasswords: [p.seedPassword, p.env.ACP_SEED_PASSWORD], storeSeedPassword: storeSeed });
    const how =
      r.protection === "seed-password"
        ? "key encrypted with ACP_SEED_PASSWORD"
        : r.protection === "source-seed-password"
          ? "key kept under the seed password that opened it"
          : "key kept as the SDK stored it: under its default EMPTY seed password (set ACP_SEED_PASSWORD and import again to encrypt it)";
    p.io.out(`imported ${from.aid} from ${from.dir} into ${r.identity.dir} (${how})`);
    for (const line of certLines(summarizeCertificate(r.identity.certPem), statusOf(r.identity.certPem, p.now))) p.io.out(line);
  }
  return 0;
}

function readCert(dir: string, aid: string): string {
  const file = join(dir, "public", `${aid}.crt`);
  if (!existsSync(file)) throw new UsageError(`no identity \`${aid}\` (${file} is missing)`);
  return readFileSync(file, "utf8");
}

/** The TLS rules of `--ca-file` / `--insecure-tls`, else the config's `network` (the opt-out warned about). */
function tlsFromFlags(values: { "ca-file"?: string | undefined; "insecure-tls"?: boolean | undefined }, config: ChannelConfig | undefined, io: { err(line: string): void }): TlsOptions {
  const tls: TlsOptions = {};
  const caFile = values["ca-file"] ?? config?.network.caFile;
  if (caFile) tls.caFile = caFile;
  if (values["insecure-tls"] || config?.network.insecureTls) {
    tls.insecureTls = true;
    io.err("acp-group: warning: TLS certificates are NOT verified (--insecure-tls)");
  }
  return tls;
}
