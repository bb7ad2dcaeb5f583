// `acp-group import-evol --config FILE`: switch from the public ACP channel for OpenClaw ("evol",
// on the official SDK acp-ts) in one command. Reads the OpenClaw config's `channels.evol` (or the
// older `channels.acp`), finds each of its identities in the SDK's storage (evol's ~/.acp-storage,
// the SDK's default ~/acp, or --acp-storage), imports key and certificate into our store (the key
// opened with evol's seed password, --seed-password, ACP_SEED_PASSWORD or the SDK's default empty
// one), adds the groups the SDK's store recorded, writes the config `run` takes (the object
// OpenClaw takes as `channels.acp-group`), and prints what it carried over, what has no
// equivalent, and whether evol still runs the same identity.
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { convertEvolConfig, type EvolAccount, type EvolConversion } from "../config/evol-config.ts";
import { parseChannelConfig } from "../config/load.ts";
import { aidDomain } from "../network/access-point.ts";
import { defaultAcpTsStorageDirs, findAcpTsIdentities, importAcpTsIdentity, readAcpTsGroups, type AcpTsIdentity, type ImportedAcpTsIdentity } from "../network/acp-ts-store.ts";
import { identityPaths, loadIdentity } from "../network/identity-store.ts";
import { defaultStateDir } from "../state/file-store.ts";
import { CommandError, parse, UsageError, type Io } from "./args.ts";
import { recordIdentityAccess } from "./join-config.ts";
import { expandHome, openClawConfigPath, readOpenClawConfig } from "./openclaw-config.ts";

interface Plan {
  account: EvolAccount | undefined;
  source: AcpTsIdentity;
}

export async function importEvolCommand(args: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parse(args, {
    config: { type: "string" },
    "openclaw-config": { type: "string" },
    "acp-storage": { type: "string", multiple: true },
    "seed-password": { type: "string" },
    "state-dir": { type: "string" },
    "ap-url": { type: "string" },
    "ca-file": { type: "string" },
    force: { type: "boolean" },
    "dry-run": { type: "boolean" },
  });
  if (!values.config) throw new UsageError("expected `--config FILE`: the config to write (what `acp-group run --config FILE` runs)");
  if (existsSync(values.config) && !values.force && !values["dry-run"]) throw new UsageError(`${values.config} exists: give a new file, or --force to overwrite it`);
  if (values["ap-url"] !== undefined && !/^https?:\/\//.test(values["ap-url"])) throw new UsageError(`expected \`--ap-url\` to be an http:// or https:// URL, got \`${values["ap-url"]}\``);
  if (values["ca-file"] !== undefined && !existsSync(values["ca-file"])) throw new UsageError(`--ca-file ${values["ca-file"]}: no such file`);
  const stateDir = values["state-dir"] ?? defaultStateDir(env);
  const dryRun = values["dry-run"] === true;
  const storeSeed = env.ACP_SEED_PASSWORD || undefined;

  // The OpenClaw config: named, else the default place (its absence is fine there).
  const openclawFile = values["openclaw-config"] ?? openClawConfigPath(env);
  if (values["openclaw-config"] !== undefined && !existsSync(openclawFile)) throw new UsageError(`--openclaw-config ${openclawFile}: no such file`);
  const openclaw = readOpenClawConfig(openclawFile);
  const conversion = openclaw === undefined ? undefined : convertEvolConfig(openclaw, { expandHome: (p) => expandHome(p) });
  if (openclaw === undefined) io.out(`no OpenClaw config at ${openclawFile}: importing the identities of the SDK's storage alone`);
  else if (!conversion) io.out(`${openclawFile} has no channels.evol or channels.acp: importing the identities of the SDK's storage alone`);
  else io.out(`${conversion.source} in ${openclawFile}: ${conversion.accounts.map((a) => a.aid).join(", ") || "no identity"}`);

  // Where the SDK keeps them.
  const storages = (values["acp-storage"] ?? defaultAcpTsStorageDirs()).filter((d) => existsSync(d));
  const found = storages.flatMap((d) => findAcpTsIdentities(d));
  if (found.length === 0) {
    throw new CommandError(`no acp-ts identity found in ${(values["acp-storage"] ?? defaultAcpTsStorageDirs()).join(" or ")} (AIDs/<aid>/private/<aid>.key and public/<aid>.crt): pass --acp-storage DIR`);
  }
  const plans: Plan[] = [];
  const missing: string[] = [];
  if (conversion && conversion.accounts.length > 0) {
    for (const account of conversion.accounts) {
      const source = found.find((f) => f.aid.toLowerCase() === account.aid.toLowerCase());
      if (source) plans.push({ account, source });
      else missing.push(account.aid);
    }
  } else {
    const seen = new Set<string>();
    for (const source of found) if (!seen.has(source.aid.toLowerCase()) && seen.add(source.aid.toLowerCase())) plans.push({ account: undefined, source });
  }
  if (plans.length === 0) throw new CommandError(`${missing.join(", ")}: not in ${storages.join(" or ")} (pass --acp-storage DIR where the SDK keeps them)`);

  // The config: converted from evol's section, else one plain identity per aid found.
  const raw = conversion ? structuredClone(conversion.config) : { identities: {} as Record<string, Record<string, unknown>>, humans: [] as string[], groups: {} as Record<string, Record<string, unknown>> };
  // An identity evol names but the storage lacks is not written: `run` could not sign it in.
  for (const aid of missing) {
    const account = conversion?.accounts.find((a) => a.aid === aid);
    if (account) delete raw.identities[account.identityId];
  }
  const idOf = (plan: Plan) => plan.account?.identityId ?? uniqueKey(raw.identities, plan.source.aid);
  const imported: Array<{ plan: Plan; id: string; result?: ImportedAcpTsIdentity }> = [];
  for (const plan of plans) {
    const id = idOf(plan);
    raw.identities[id] ??= { aid: plan.source.aid };
    const identity = raw.identities[id]!;
    const groups = readAcpTsGroups(plan.source);
    if (groups.length > 0) {
      const own = (identity.groups ?? {}) as Record<string, Record<string, unknown>>;
      for (const g of groups) {
        const ap = g.targetAid.startsWith("group.") ? g.targetAid.slice("group.".length) : undefined;
        own[g.groupId] = {
          ...(g.groupName && g.groupName !== g.groupId ? { subject: g.groupName.slice(0, 200) } : {}),
          ...(ap && ap.toLowerCase() !== aidDomain(plan.source.aid).toLowerCase() ? { accessPoint: ap } : {}),
        };
      }
      identity.groups = own;
    }
    if (values["ap-url"]) identity.accessPointUrl = values["ap-url"];
    imported.push({ plan, id });
  }
  const config: Record<string, unknown> = {
    identities: raw.identities,
    ...(raw.humans.length > 0 ? { humans: raw.humans } : {}),
    ...(Object.keys(raw.groups).length > 0 ? { groups: raw.groups } : {}),
    ...(values["ca-file"] ? { network: { caFile: resolve(values["ca-file"]) } } : {}),
    stateDir: resolve(stateDir),
  };
  parseChannelConfig(config, { source: values.config });

  // The keys: opened, checked against their certificates, stored.
  for (const entry of imported) {
    const { plan } = entry;
    if (!dryRun) {
      refuseAnotherKey(stateDir, plan.source, storeSeed ?? plan.account?.seedPassword ?? values["seed-password"]);
      entry.result = importAcpTsIdentity({ stateDir, from: plan.source, seedPasswords: [plan.account?.seedPassword, values["seed-password"], env.ACP_SEED_PASSWORD], storeSeedPassword: storeSeed });
      if (values["ap-url"]) recordIdentityAccess(stateDir, plan.source.aid, { accessPointUrl: values["ap-url"], ...(values["ca-file"] ? { caFile: values["ca-file"] } : {}) });
    }
  }
  if (!dryRun) {
    mkdirSync(dirname(resolve(values.config)), { recursive: true });
    const tmp = `${values.config}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(config, null, 2) + "\n");
    renameSync(tmp, values.config);
  }
  report({ io, imported, missing, conversion, config, file: values.config, dryRun, openclawFile, storeSeed: storeSeed !== undefined });
  return missing.length > 0 ? 1 : 0;
}

/** A fresh identities key for an aid: its first label, else the whole aid. */
function uniqueKey(identities: Record<string, unknown>, aid: string): string {
  const label = aid.slice(0, aid.indexOf("."));
  return label in identities ? aid : label;
}

/** An identity already in our store under another key is never replaced by an import. */
function refuseAnotherKey(stateDir: string, source: AcpTsIdentity, seed: string | undefined): void {
  if (!existsSync(identityPaths({ aid: source.aid, stateDir }).cert)) return;
  let ours: ReturnType<typeof loadIdentity>;
  let theirs: ReturnType<typeof loadIdentity>;
  try {
    ours = loadIdentity({ aid: source.aid, stateDir, seedPassword: seed });
    theirs = loadIdentity({ aid: source.aid, identityDir: source.dir, seedPassword: seed });
  } catch {
    return; // cannot compare: the import itself says what is wrong, or replaces a key we cannot open
  }
  if (ours.publicKeyPem !== theirs.publicKeyPem) {
    throw new CommandError(`${source.aid} is in ${identityPaths({ aid: source.aid, stateDir }).dir} already, with another key: move that folder away first (a network knows an aid by one key)`);
  }
}

function report(p: {
  io: Io;
  imported: Array<{ plan: Plan; id: string; result?: ImportedAcpTsIdentity }>;
  missing: string[];
  conversion: EvolConversion | undefined;
  config: Record<string, unknown>;
  file: string;
  dryRun: boolean;
  openclawFile: string;
  storeSeed: boolean;
}): void {
  const { io } = p;
  const would = p.dryRun ? "would import" : "imported";
  for (const { plan, id, result } of p.imported) {
    const key = !result
      ? ""
      : result.protection === "seed-password"
        ? " (key encrypted with ACP_SEED_PASSWORD)"
        : result.protection === "source-seed-password"
          ? " (key kept under evol's seed password: set ACP_SEED_PASSWORD to it to run)"
          : " (key kept as the SDK stored it: under the SDK's default EMPTY seed password, so anyone who can read the file can use it — set ACP_SEED_PASSWORD and import again to encrypt it)";
    io.out(`${would} ${plan.source.aid} from ${plan.source.dir} as identities.${id}${result?.identity.dir ? ` → ${result.identity.dir}` : ""}${key}`);
  }
  for (const aid of p.missing) io.err(`acp-group: ${aid} (in the evol config) is not in the SDK's storage: not imported (pass --acp-storage DIR)`);
  const groups = Object.entries(p.config.identities as Record<string, { groups?: Record<string, unknown> }>).flatMap(([id, i]) => Object.keys(i.groups ?? {}).filter((g) => g !== "*").map((g) => `${id}:${g}`));
  io.out(`${p.dryRun ? "would write" : "wrote"} ${p.file}: ${Object.keys(p.config.identities as object).length} identit${Object.keys(p.config.identities as object).length === 1 ? "y" : "ies"}; groups ${groups.join(", ") || "none (the SDK's store recorded none: add them with `acp-group join <link> --config " + p.file + "`)"}`);
  if (p.conversion) {
    io.out("carried over:");
    for (const line of p.conversion.carried) io.out(`  ${line}`);
    io.out(p.conversion.noEquivalent.length > 0 ? "no equivalent (not carried):" : "no equivalent: nothing");
    for (const line of p.conversion.noEquivalent) io.out(`  ${line}`);
    if (p.conversion.toDo.length > 0) {
      io.out("to do by hand in the OpenClaw config:");
      for (const line of p.conversion.toDo) io.out(`  ${line}`);
    }
    if (p.conversion.running) {
      io.err(
        `acp-group: WARNING: evol still runs ${p.conversion.accounts.map((a) => a.aid).join(", ")} (${p.conversion.source}.enabled is true in ${p.openclawFile}). ` +
          `One identity must not run in two channels at once: turn evol off before starting this one: \`openclaw config set ${p.conversion.source}.enabled false\` (\`acp-group run\` refuses until then)`,
      );
    }
  }
  io.out(`next: npx acp-group run --config ${p.file}   (in OpenClaw: the same object under channels.acp-group)`);
}
