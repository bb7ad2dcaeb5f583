import { createHash } from "node:crypto";

// Longest encoded name we keep whole; most file systems cap a name at 255 bytes and we add
// suffixes (`.group.json.tmp-…`, `.corrupt-…`), so stay well below.
const MAX_NAME = 120;

/**
 * Encodes any id (agent id, group id, arbitrary replay nick) into one safe path segment.
 *
 * Only `[a-z0-9._-]` pass through; everything else — including upper-case letters, so that ids
 * differing in case stay distinct on case-insensitive file systems — becomes `%XX` per UTF-8
 * byte. A leading dot is escaped too (no hidden files, no `.`/`..`). Over-long names keep a
 * readable head plus a hash of the full id, so two long ids never share a file.
 */
export function encodeSafeName(id: string): string {
  if (id.length === 0) return "%00empty";
  let out = "";
  for (const byte of Buffer.from(id, "utf8")) {
    const ch = String.fromCharCode(byte);
    const plain = /[a-z0-9_-]/.test(ch) || (ch === "." && out.length > 0);
    out += plain ? ch : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  if (out.length <= MAX_NAME) return out;
  const hash = createHash("sha256").update(id, "utf8").digest("hex").slice(0, 16);
  return `${out.slice(0, MAX_NAME - 18)}~${hash}`;
}
