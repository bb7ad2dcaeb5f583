// Plain JSON objects as frames carry them, and the short type descriptions that error details
// use instead of the offending value.

export type Plain = Record<string, unknown>;
export const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v);

/** Short type description for error details (never the value itself: it may be huge). */
export function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "string") return v.length > 24 ? `string(${v.length})` : JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return typeof v;
}
