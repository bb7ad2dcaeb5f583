// Durable per-(identity, group) state (seed 004 lifecycle): loaded when a group client starts,
// saved when it changes and when it closes, so a restart resumes from the cursor with the same
// budget, reply hashes and conversation.
import { readFileSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { Logger, PersistedGroupState } from "../types.ts";
import { silentLogger } from "../log.ts";
import { writeFileAtomic, writeFileAtomicSync } from "./atomic-file.ts";
import { encodeSafeName } from "./safe-name.ts";
import { persistedDirectStateSchema, type PersistedDirectState } from "./direct-state.ts";

export interface StateStore {
  /** Undefined when nothing was saved yet, or when the file was corrupt (it is moved aside). */
  loadGroup(identityId: string, groupId: string): PersistedGroupState | undefined;
  /** Atomic: a crash leaves either the previous state or this one. */
  saveGroup(identityId: string, groupId: string, s: PersistedGroupState): void;
  /** As saveGroup, off the event loop. Callers keep at most one in flight per group (the save scheduler). */
  saveGroupAsync?(identityId: string, groupId: string, s: PersistedGroupState): Promise<void>;
  loadConversation(identityId: string, groupId: string): unknown | undefined;
  saveConversation(identityId: string, groupId: string, data: unknown): void;
  /** The identity's direct conversations (src/direct/): undefined when none were saved, or the file was corrupt (moved aside). */
  loadDirect?(identityId: string): PersistedDirectState | undefined;
  /** Atomic and synchronous: it is written before every direct reply goes out. */
  saveDirect?(identityId: string, s: PersistedDirectState): void;
  readonly dir: string;
}

export type StateErrorCode = "STATE_READ_FAILED" | "STATE_WRITE_FAILED";

/** A state file could not be read or written (I/O, not content). Carries where and for whom. */
export class StateError extends Error {
  readonly code: StateErrorCode;
  readonly identityId: string;
  readonly groupId: string;
  readonly file: string;
  constructor(p: { code: StateErrorCode; identityId: string; groupId: string; file: string; cause: unknown }) {
    const reason = (p.cause as NodeJS.ErrnoException | undefined)?.code ?? String(p.cause);
    super(`${p.code === "STATE_READ_FAILED" ? "cannot read" : "cannot write"} ${p.file}: ${reason}`, { cause: p.cause });
    this.name = "StateError";
    this.code = p.code;
    this.identityId = p.identityId;
    this.groupId = p.groupId;
    this.file = p.file;
  }
}

/** `ACP_GROUP_STATE_DIR` if set, else `~/.acp-group/state`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.ACP_GROUP_STATE_DIR?.trim();
  if (explicit) return explicit;
  const home = env.HOME?.trim() || env.USERPROFILE?.trim() || homedir();
  return join(home, ".acp-group", "state");
}

const count = z.number().int().min(0);

// Validated at the edge: a file that parses as JSON but has the wrong shape is as corrupt as a
// torn one, and the core must never see a half-valid state.
const persistedGroupStateSchema = z
  .object({
    version: z.literal(1),
    cursor: count,
    lastSelfSpeakAt: z.number().nullable(),
    replyHashes: z.array(z.string()),
    replyTexts: z.array(z.string()),
    budgetEvents: z.array(z.tuple([z.number(), count, z.number().int().min(0).max(1)])),
    senderCharges: z.array(z.tuple([z.number(), count, z.string()])).optional(),
    agentChain: count,
  })
  .strict();

// On disk every file says whose it is: names are encoded (and hashed when long), so the ids
// inside are the authority, and a mismatch is treated as "not ours".
const envelopeSchema = z.object({
  kind: z.enum(["group-state", "conversation", "direct-state"]),
  identityId: z.string(),
  groupId: z.string(),
  savedAt: z.string(),
  data: z.unknown(),
});

type Kind = z.infer<typeof envelopeSchema>["kind"];

const SUFFIX: Record<Kind, string> = { "group-state": ".group.json", conversation: ".conversation.json", "direct-state": ".direct.json" };
/** The name the direct-conversation file goes by where a group id would (`<identity>/dm.direct.json`). */
const DIRECT = "dm";

/**
 * File-backed {@link StateStore}: `<dir>/<identity>/<group>.group.json` and
 * `<group>.conversation.json`, names encoded so that any id is safe. Group state has an
 * asynchronous save too (the runtime's frequent saves go through it and a save scheduler);
 * loads and conversation saves are synchronous: rare, and at start or close.
 */
export function createFileStateStore(p: { dir: string; logger?: Logger; now?: () => number }): StateStore {
  const logger = p.logger ?? silentLogger;
  const now = p.now ?? Date.now;
  const dir = p.dir;

  const fileFor = (identityId: string, groupId: string, kind: Kind): string =>
    join(dir, encodeSafeName(identityId), encodeSafeName(groupId) + SUFFIX[kind]);

  function moveAside(file: string, identityId: string, groupId: string, problem: string): void {
    const aside = `${file}.corrupt-${now()}`;
    try {
      renameSync(file, aside);
      logger.log("warn", "state.corrupt", { identityId, groupId, file, movedTo: aside, problem });
    } catch (err) {
      logger.log("error", "state.corrupt", {
        identityId,
        groupId,
        file,
        problem,
        moveAsideFailed: (err as NodeJS.ErrnoException).code ?? String(err),
      });
    }
  }

  function read(identityId: string, groupId: string, kind: Kind): { data: unknown; file: string } | undefined {
    const file = fileFor(identityId, groupId, kind);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      // Not "corrupt": the data may be fine and merely unreadable now. Starting from scratch
      // would silently reset the cursor and the budget, so the caller must decide.
      throw new StateError({ code: "STATE_READ_FAILED", identityId, groupId, file, cause: err });
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      moveAside(file, identityId, groupId, `not JSON: ${(err as Error).message}`);
      return undefined;
    }
    const env = envelopeSchema.safeParse(raw);
    if (!env.success || env.data.kind !== kind) {
      moveAside(file, identityId, groupId, "not a state file of this kind");
      return undefined;
    }
    if (env.data.identityId !== identityId || env.data.groupId !== groupId) {
      logger.log("warn", "state.foreign-file", {
        identityId,
        groupId,
        file,
        fileIdentityId: env.data.identityId,
        fileGroupId: env.data.groupId,
      });
      return undefined;
    }
    return { data: env.data.data, file };
  }

  const encode = (identityId: string, groupId: string, kind: Kind, data: unknown): string =>
    JSON.stringify({ kind, identityId, groupId, savedAt: new Date(now()).toISOString(), data });

  function write(identityId: string, groupId: string, kind: Kind, data: unknown): void {
    const file = fileFor(identityId, groupId, kind);
    const text = encode(identityId, groupId, kind, data);
    try {
      writeFileAtomicSync(file, text);
    } catch (err) {
      throw new StateError({ code: "STATE_WRITE_FAILED", identityId, groupId, file, cause: err });
    }
  }

  return {
    dir,
    loadGroup(identityId, groupId) {
      const found = read(identityId, groupId, "group-state");
      if (!found) return undefined;
      const parsed = persistedGroupStateSchema.safeParse(found.data);
      if (!parsed.success) {
        const problem = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
        moveAside(found.file, identityId, groupId, problem);
        return undefined;
      }
      return parsed.data;
    },
    saveGroup(identityId, groupId, s) {
      write(identityId, groupId, "group-state", s);
    },
    async saveGroupAsync(identityId, groupId, s) {
      const file = fileFor(identityId, groupId, "group-state");
      try {
        await writeFileAtomic(file, encode(identityId, groupId, "group-state", s));
      } catch (err) {
        throw new StateError({ code: "STATE_WRITE_FAILED", identityId, groupId, file, cause: err });
      }
    },
    loadDirect(identityId) {
      const found = read(identityId, DIRECT, "direct-state");
      if (!found) return undefined;
      const parsed = persistedDirectStateSchema.safeParse(found.data);
      if (!parsed.success) {
        moveAside(found.file, identityId, DIRECT, parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "));
        return undefined;
      }
      return parsed.data;
    },
    saveDirect(identityId, s) {
      write(identityId, DIRECT, "direct-state", s);
    },
    loadConversation(identityId, groupId) {
      return read(identityId, groupId, "conversation")?.data;
    },
    saveConversation(identityId, groupId, data) {
      write(identityId, groupId, "conversation", data);
    },
  };
}
