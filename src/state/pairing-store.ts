// The standalone pairing store of `dmPolicy: "pairing"`: an unknown sender gets a one-line code,
// the owner approves it with `acp-group pairing approve <code> --identity <aid>`, and from then on
// the sender may talk to the agent. Two files per identity in `<stateDir>/pairing/`, each written
// by one side only, so the running agent and the command never overwrite each other: the agent
// writes the requests (`<aid>.requests.json`), the command the approvals (`<aid>.approved.json`).
// Both 0600 (they name who talks to whom), written atomically. OpenClaw brings its own pairing.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { DirectPairing } from "../types.ts";
import { writeFileAtomicSync } from "./atomic-file.ts";
import { encodeSafeName } from "./safe-name.ts";

/** A code is good this long after it was given. */
export const PAIRING_CODE_TTL_MS = 3600_000;
/** Requests kept per identity; past this the oldest go. */
const MAX_REQUESTS = 50;
// No 0/O, 1/I/L: read aloud or typed from a phone, a code must not be misread.
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

const requestsSchema = z.object({ requests: z.array(z.object({ peer: z.string(), code: z.string(), createdAt: z.number() }).strict()) }).strict();
const approvedSchema = z.object({ approved: z.array(z.object({ peer: z.string(), approvedAt: z.number(), code: z.string().optional() }).strict()) }).strict();

export type PairingRequest = z.infer<typeof requestsSchema>["requests"][number];
export type PairingApproval = z.infer<typeof approvedSchema>["approved"][number];

export class PairingError extends Error {
  readonly code: "PAIRING_CODE_UNKNOWN" | "PAIRING_FILE_INVALID";
  constructor(code: PairingError["code"], message: string) {
    super(message);
    this.name = "PairingError";
    this.code = code;
  }
}

export interface PairingStore extends DirectPairing {
  /** The owner approves a code: its sender is allowed from now on. Throws PAIRING_CODE_UNKNOWN for an unknown or expired code. */
  approve(p: { aid: string; code: string; now: number }): PairingApproval;
  /** Takes an approved sender off the list. False when they were not on it. */
  revoke(p: { aid: string; peer: string }): boolean;
  list(aid: string, now: number): { requests: PairingRequest[]; approved: PairingApproval[] };
}

export function createPairingStore(p: { dir: string; random?: (bytes: number) => Buffer }): PairingStore {
  const random = p.random ?? randomBytes;
  const file = (aid: string, kind: "requests" | "approved") => join(p.dir, `${encodeSafeName(aid.toLowerCase())}.${kind}.json`);
  const read = <T>(path: string, schema: z.ZodType<T>, empty: T): T => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return empty;
      throw err;
    }
    const parsed = schema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new PairingError("PAIRING_FILE_INVALID", `${path}: not a pairing file (${parsed.error.issues[0]?.message ?? "invalid"})`);
    return parsed.data;
  };
  const requests = (aid: string, now: number) => read(file(aid, "requests"), requestsSchema, { requests: [] }).requests.filter((r) => now - r.createdAt < PAIRING_CODE_TTL_MS);
  const approved = (aid: string) => read(file(aid, "approved"), approvedSchema, { approved: [] }).approved;
  const newCode = () => [...random(8)].map((b) => ALPHABET[b % ALPHABET.length]).join("");

  return {
    isApproved({ aid, peer }) {
      const who = peer.toLowerCase();
      return approved(aid).some((a) => a.peer.toLowerCase() === who);
    },
    async request({ aid, peer, now }) {
      const who = peer.toLowerCase();
      const live = requests(aid, now);
      // One code per sender while it is good: asking again gets nothing new (and no second line).
      if (live.some((r) => r.peer.toLowerCase() === who)) return {};
      const code = newCode();
      const next = [...live, { peer, code, createdAt: now }].slice(-MAX_REQUESTS);
      writeFileAtomicSync(file(aid, "requests"), JSON.stringify({ requests: next }));
      return { reply: `${aid} answers only senders its owner approved. Pairing code ${code}: the owner approves it with \`acp-group pairing approve ${code} --identity ${aid}\` (good for an hour).` };
    },
    approve({ aid, code, now }) {
      const wanted = code.trim().toUpperCase();
      const found = requests(aid, now).find((r) => r.code === wanted);
      if (!found) throw new PairingError("PAIRING_CODE_UNKNOWN", `no pairing request with code ${wanted} for ${aid} (unknown, or older than an hour: the sender gets a new code when they write again)`);
      const list = approved(aid).filter((a) => a.peer.toLowerCase() !== found.peer.toLowerCase());
      const approval: PairingApproval = { peer: found.peer, approvedAt: now, code: wanted };
      writeFileAtomicSync(file(aid, "approved"), JSON.stringify({ approved: [...list, approval] }));
      return approval;
    },
    revoke({ aid, peer }) {
      const who = peer.toLowerCase();
      const list = approved(aid);
      const kept = list.filter((a) => a.peer.toLowerCase() !== who);
      if (kept.length === list.length) return false;
      writeFileAtomicSync(file(aid, "approved"), JSON.stringify({ approved: kept }));
      return true;
    },
    list(aid, now) {
      return { requests: requests(aid, now), approved: approved(aid) };
    },
  };
}
