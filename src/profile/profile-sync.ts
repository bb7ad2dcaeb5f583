// After sign-in, each identity publishes its agent.md — but only when the text changed since the
// last successful publish, remembered per identity in `<stateDir>/<identity>/profile.json`.
// Never throws: a bad file or a failed upload is one warn line and the identity carries on.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { errorFields } from "../log.ts";
import { writeFileAtomic, writeFileAtomicSync } from "../state/atomic-file.ts";
import { encodeSafeName } from "../state/safe-name.ts";
import type { IdentityConfig, Logger } from "../types.ts";
import { agentMdHash, buildAgentMd, loadAgentMdFile, packageVersion, ProfileError } from "./agent-md.ts";
import { publishAgentMd, type FetchLike } from "./publish.ts";

export type ProfileIdentity = Pick<IdentityConfig, "aid" | "name" | "persona" | "profile">;

/** What we last published for an identity (the text too, so `id show` works offline). */
export interface PublishedProfile {
  version: 1;
  aid: string;
  hash: string;
  /** Local clock, epoch ms. */
  publishedAt: number;
  text: string;
}

const publishedSchema = z
  .object({ version: z.literal(1), aid: z.string(), hash: z.string(), publishedAt: z.number(), text: z.string() })
  .strict();

export function profileStateFile(stateDir: string, identityId: string): string {
  return join(stateDir, encodeSafeName(identityId), "profile.json");
}

/** The last published profile, or undefined when none was recorded or the file is unreadable. */
export function readPublishedProfile(stateDir: string, identityId: string): PublishedProfile | undefined {
  return readPublishedFile(profileStateFile(stateDir, identityId));
}

/** The last published profile of `aid` by any identity kept in `stateDir` (for `id show` without a config). */
export function findPublishedProfile(stateDir: string, aid: string): PublishedProfile | undefined {
  let dirs: string[];
  try {
    dirs = readdirSync(stateDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return undefined;
  }
  const want = aid.toLowerCase();
  let best: PublishedProfile | undefined;
  for (const dir of dirs) {
    const found = readPublishedFile(join(stateDir, dir, "profile.json"));
    if (found && found.aid.toLowerCase() === want && (!best || found.publishedAt > best.publishedAt)) best = found;
  }
  return best;
}

function readPublishedFile(file: string): PublishedProfile | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed = publishedSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // A torn or hand-edited file only costs one extra publish.
    return undefined;
  }
}

export function writePublishedProfile(stateDir: string, identityId: string, p: PublishedProfile): void {
  writeFileAtomicSync(profileStateFile(stateDir, identityId), JSON.stringify(p) + "\n");
}

/** The profile text an identity would publish: its configured file, or a generated one. Throws {@link ProfileError}. */
export function resolveProfileText(identity: ProfileIdentity, version: string = packageVersion()): { text: string; source: "file" | "generated" } {
  const profile = identity.profile;
  if (profile?.file !== undefined) return { text: loadAgentMdFile(profile.file, identity.aid), source: "file" };
  return {
    text: buildAgentMd({
      aid: identity.aid,
      name: identity.name,
      persona: identity.persona,
      description: profile?.description,
      tags: profile?.tags,
      version,
    }),
    source: "generated",
  };
}

export type ProfileSyncResult =
  | { action: "published"; hash: string; source: "file" | "generated" }
  | { action: "unchanged"; hash: string }
  | { action: "skipped"; reason: "disabled" | "no-token" | "invalid-file" | "publish-failed" };

/**
 * Publishes the identity's agent.md when it differs from the last successful publish (same
 * aid and content hash → nothing sent). Call once per identity after sign-in, with the
 * message-service token. Resolves, never rejects.
 */
export async function publishProfileIfChanged(p: {
  identityId: string;
  identity: ProfileIdentity;
  /** Message-service token from sign-in. */
  token: string | undefined;
  stateDir: string;
  fetch: FetchLike;
  logger: Logger;
  /** Local clock for `publishedAt`. */
  now: () => number;
  version?: string;
  url?: string;
}): Promise<ProfileSyncResult> {
  const { identity, logger } = p;
  const fields = { identity: p.identityId, aid: identity.aid };
  if (identity.profile?.publish === false) return { action: "skipped", reason: "disabled" };
  if (!p.token) {
    logger.log("warn", "profile.publish-failed", { ...fields, reason: "no-token" });
    return { action: "skipped", reason: "no-token" };
  }
  let resolved: { text: string; source: "file" | "generated" };
  try {
    resolved = resolveProfileText(identity, p.version);
  } catch (err) {
    const detail = err instanceof ProfileError ? { code: err.code, error: err.message } : { error: errorFields(err).error };
    logger.log("warn", "profile.publish-failed", { ...fields, reason: "invalid-file", ...detail });
    return { action: "skipped", reason: "invalid-file" };
  }
  const hash = agentMdHash(resolved.text);
  const last = readPublishedProfile(p.stateDir, p.identityId);
  if (last && last.hash === hash && last.aid.toLowerCase() === identity.aid.toLowerCase()) {
    logger.log("debug", "profile.unchanged", { ...fields, hash });
    return { action: "unchanged", hash };
  }
  const result = await publishAgentMd({ aid: identity.aid, text: resolved.text, token: p.token, fetch: p.fetch, logger, ...(p.url ? { url: p.url } : {}) });
  // Too large never gets better by trying again: as a file that cannot be published.
  if (!result.ok) return { action: "skipped", reason: result.reason === "too-large" ? "invalid-file" : "publish-failed" };
  try {
    // Off the main thread: a thousand identities publishing at start-up must not stall on fsync.
    await writeFileAtomic(profileStateFile(p.stateDir, p.identityId), JSON.stringify({ version: 1, aid: identity.aid, hash, publishedAt: p.now(), text: resolved.text } satisfies PublishedProfile) + "\n");
  } catch (err) {
    // Published, but we will publish again next start: harmless, so a warning.
    logger.log("warn", "profile.state-write-failed", { ...fields, ...errorFields(err) });
  }
  logger.log("info", "profile.published", { ...fields, hash, source: resolved.source, bytes: Buffer.byteLength(resolved.text, "utf8") });
  return { action: "published", hash, source: resolved.source };
}

/** What `acp-group id show` prints about an identity's profile: the last published text, or why there is none. */
export function describePublishedProfile(p: { stateDir: string; identityId: string; identity: ProfileIdentity }): string {
  if (p.identity.profile?.publish === false) return "agent.md: not published (profile.publish is false)";
  return describeProfile(readPublishedProfile(p.stateDir, p.identityId));
}

/** The text of {@link describePublishedProfile} for a record found some other way (or none). */
export function describeProfile(published: PublishedProfile | undefined): string {
  if (!published) return "agent.md: not published yet (it is published after the next sign-in)";
  const head = `agent.md published ${new Date(published.publishedAt).toISOString()} (sha256 ${published.hash.slice(0, 12)}):`;
  return `${head}\n${published.text.trimEnd()}`;
}
