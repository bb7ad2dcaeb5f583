// An identity's public profile on the ACP network, `agent.md`: Markdown of at most 4 KB that
// starts with YAML front matter (aid, name, type, version, description, tags) and a `# <name>`
// heading. Builds ours, reads anyone's, validates a file the config names. Pure except
// `loadAgentMdFile`, which reads one file.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readMemberTypeWord } from "../wire/member-type.ts";

/** The network's limit for a published profile, in UTF-8 bytes. */
export const AGENT_MD_MAX_BYTES = 4096;

export type ProfileType = "human" | "agent" | "unknown";

export interface ParsedAgentMd {
  aid?: string;
  name?: string;
  /**
   * What the profile says it is: a human word is `human`; `agent` or the agent's framework
   * (evol's `openclaw`, …) is `agent`; nothing (or a role) is `unknown`.
   */
  type: ProfileType;
  /** The `type` value as written (e.g. `openclaw`), when there is one. */
  declaredType?: string;
  version?: string;
  description?: string;
  tags: string[];
  /** True when the text starts with a `---` front matter block that is closed. */
  hasFrontMatter: boolean;
}

export interface BuildAgentMdParams {
  aid: string;
  name?: string | undefined;
  persona?: string | undefined;
  /** Explicit description; else the persona's first sentence; else a generic line. */
  description?: string | undefined;
  tags?: readonly string[] | undefined;
  /** Our package version. */
  version: string;
}

const DESCRIPTION_FROM_PERSONA_MAX = 200;

/** Removes control and format characters and folds whitespace runs: front matter values are one line. */
function oneLine(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The persona's first sentence (or line), cut to a readable length. */
export function descriptionFromPersona(persona: string): string {
  const firstLine = persona.trim().split(/\r?\n/)[0] ?? "";
  // A Latin stop ends a sentence before a space ("v1.2" does not); a CJK stop ends one anywhere.
  const sentence = /^.*?(?:[.!?](?=\s|$)|[。！？])/u.exec(firstLine)?.[0] ?? firstLine;
  const line = oneLine(sentence);
  const chars = [...line];
  return chars.length <= DESCRIPTION_FROM_PERSONA_MAX ? line : `${chars.slice(0, DESCRIPTION_FROM_PERSONA_MAX - 1).join("")}…`;
}

// Double-quoted YAML scalars: JSON string syntax is a subset of YAML's double-quoted style, so
// a name with a colon, quote or leading dash cannot break the front matter.
const yamlString = (s: string): string => JSON.stringify(s);

/** The user part of an aid (`alice` of `alice.agentcp.io`). */
function userPart(aid: string): string {
  const dot = aid.indexOf(".");
  return dot > 0 ? aid.slice(0, dot) : aid;
}

/**
 * Our generated profile. Always within {@link AGENT_MD_MAX_BYTES}: when the explicit fields are
 * long, the body repeats less and tags are dropped from the end until it fits.
 */
export function buildAgentMd(p: BuildAgentMdParams): string {
  const name = oneLine(p.name ?? "") || userPart(p.aid);
  const description =
    (p.description !== undefined ? oneLine(p.description) : "") ||
    (p.persona?.trim() ? descriptionFromPersona(p.persona) : "") ||
    `AI agent ${name} taking part in group chats on the ACP agent network.`;
  let tags = (p.tags ?? []).map(oneLine).filter(Boolean);
  const compose = (withBody: boolean): string => {
    const lines = [
      "---",
      `aid: ${yamlString(p.aid)}`,
      `name: ${yamlString(name)}`,
      "type: agent",
      `version: ${yamlString(p.version)}`,
      `description: ${yamlString(description)}`,
    ];
    if (tags.length === 0) lines.push("tags: []");
    else lines.push("tags:", ...tags.map((t) => `  - ${yamlString(t)}`));
    lines.push("---", "", `# ${name}`, "");
    if (withBody) lines.push(description, "", "I take part in group chats on the ACP agent network and answer when addressed.", "");
    return lines.join("\n");
  };
  let text = compose(true);
  if (byteLength(text) > AGENT_MD_MAX_BYTES) text = compose(false);
  while (byteLength(text) > AGENT_MD_MAX_BYTES && tags.length > 0) {
    tags = tags.slice(0, -1);
    text = compose(false);
  }
  return text;
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Content hash of a profile: republish only when it changed. */
export function agentMdHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Reads a YAML scalar as our front matter (and the SDK's) writes it: plain, '…' or "…". */
function readScalar(raw: string): string {
  const v = raw.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) {
    try {
      const parsed: unknown = JSON.parse(v);
      if (typeof parsed === "string") return parsed;
    } catch {
      // Not JSON-compatible (a YAML-only escape): take the text between the quotes.
    }
    return v.slice(1, -1);
  }
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).replace(/''/g, "'");
  // A plain scalar ends before a comment.
  return v.replace(/\s+#.*$/, "");
}

function readFlowList(raw: string): string[] {
  const inner = raw.trim().slice(1, -1);
  if (inner.trim() === "") return [];
  return inner
    .split(",")
    .map(readScalar)
    .filter((t) => t.length > 0);
}

/**
 * Reads anyone's profile. Tolerant: CRLF, a BOM, missing fields, unknown keys and a missing
 * front matter all parse; the type is read as the SDK's UI reads it (wire/member-type.ts). Never throws.
 */
export function parseAgentMd(text: string): ParsedAgentMd {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n|\r/);
  const out: ParsedAgentMd = { type: "unknown", tags: [], hasFrontMatter: false };
  if (lines[0]?.trim() !== "---") return out;
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === "---" || l.trim() === "..."));
  if (end < 0) return out;
  out.hasFrontMatter = true;
  const fields = new Map<string, string>();
  let listKey: string | undefined;
  for (const line of lines.slice(1, end)) {
    const item = /^\s+-\s*(.*)$/.exec(line) ?? /^-\s+(.*)$/.exec(line);
    if (item && listKey !== undefined) {
      if (listKey === "tags") {
        const tag = readScalar(item[1] ?? "");
        if (tag) out.tags.push(tag);
      }
      continue;
    }
    const kv = /^([A-Za-z_][\w-]*)\s*:(.*)$/.exec(line);
    if (!kv) continue;
    const key = kv[1]!.toLowerCase();
    const value = kv[2]!.trim();
    listKey = value === "" ? key : undefined;
    if (key === "tags" && value.startsWith("[") && value.endsWith("]")) out.tags = readFlowList(value);
    else if (value !== "") fields.set(key, readScalar(value));
  }
  const str = (k: string): string | undefined => {
    const v = fields.get(k);
    return v === undefined || v === "" ? undefined : v;
  };
  const aid = str("aid");
  const name = str("name");
  const version = str("version");
  const description = str("description");
  if (aid !== undefined) out.aid = aid;
  if (name !== undefined) out.name = name;
  if (version !== undefined) out.version = version;
  if (description !== undefined) out.description = description;
  const type = str("type");
  out.type = readMemberTypeWord(type);
  if (type !== undefined) out.declaredType = type;
  return out;
}

export type AgentMdProblem = "too-large" | "no-front-matter" | "aid-mismatch" | "bad-type";

export type AgentMdCheck = { ok: true; parsed: ParsedAgentMd } | { ok: false; problem: AgentMdProblem; detail: string };

/**
 * What we accept for publishing (ours) or storing (the local network): ≤ 4 KB, a closed front
 * matter, a `type` that says what it is (a person, `agent`, or the agent's framework such as
 * `openclaw`), and — when `aid` is given — no other aid in it.
 */
export function checkAgentMd(text: string, expect: { aid?: string } = {}): AgentMdCheck {
  const bytes = byteLength(text);
  if (bytes > AGENT_MD_MAX_BYTES) return { ok: false, problem: "too-large", detail: `expected at most ${AGENT_MD_MAX_BYTES} bytes, got ${bytes}` };
  const parsed = parseAgentMd(text);
  if (!parsed.hasFrontMatter) return { ok: false, problem: "no-front-matter", detail: "expected YAML front matter between two `---` lines at the start" };
  if (parsed.type === "unknown") return { ok: false, problem: "bad-type", detail: "expected a `type` in the front matter: `agent` (or the agent's framework, e.g. `openclaw`) or `human`" };
  if (expect.aid !== undefined && parsed.aid !== undefined && parsed.aid.toLowerCase() !== expect.aid.toLowerCase()) {
    return { ok: false, problem: "aid-mismatch", detail: `expected aid ${expect.aid}, got ${parsed.aid}` };
  }
  return { ok: true, parsed };
}

export type ProfileErrorCode = "PROFILE_READ_FAILED" | "PROFILE_INVALID";

/** A configured agent.md file that cannot be read or is not a valid profile. Carries the file. */
export class ProfileError extends Error {
  readonly code: ProfileErrorCode;
  readonly file: string;
  readonly problem: AgentMdProblem | "read-failed";
  constructor(p: { code: ProfileErrorCode; file: string; problem: AgentMdProblem | "read-failed"; detail: string; cause?: unknown }) {
    super(`${p.file}: ${p.detail}`, p.cause === undefined ? undefined : { cause: p.cause });
    this.name = "ProfileError";
    this.code = p.code;
    this.file = p.file;
    this.problem = p.problem;
  }
}

/** Reads and checks the profile file an identity's config names. Throws {@link ProfileError}. */
export function loadAgentMdFile(file: string, aid: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ProfileError({ code: "PROFILE_READ_FAILED", file, problem: "read-failed", detail: `cannot read agent.md: ${reason}`, cause: err });
  }
  const check = checkAgentMd(text, { aid });
  if (!check.ok) throw new ProfileError({ code: "PROFILE_INVALID", file, problem: check.problem, detail: `invalid agent.md: ${check.detail}` });
  return text;
}

let version: string | undefined;

/** The package version written into generated profiles (package.json read once: a thousand identities publish at start-up). */
export function packageVersion(): string {
  if (version !== undefined) return version;
  const raw: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  const v = (raw as { version?: unknown }).version;
  return (version = typeof v === "string" ? v : "0.0.0");
}
