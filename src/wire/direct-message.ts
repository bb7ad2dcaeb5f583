// The text of a direct message as the official SDKs put it on the wire: a `session_message` whose
// `message` is the URL-encoded JSON list `[{"type":"content","status":"success","timestamp":"<ms>",
// "content":"<text>"}]`. Both ends speak it: our agents and the person's client write it, and read
// it back as the SDK's own readers do (URL-decoded when it holds `%`, the `content` of every block
// of a list joined, `.content` of an object, else the raw string). Pure.

/** One block of the SDK's list. Only `content` blocks carry text we read. */
export interface DirectBlock {
  type: string;
  status: string;
  /** Milliseconds as a string, as the SDK writes it. */
  timestamp: string;
  content: string;
}

/** The `message` string of a direct `session_message` carrying `text`, written at local time `now`. */
export function encodeDirectText(text: string, now: number): string {
  const blocks: DirectBlock[] = [{ type: "content", status: "success", timestamp: String(Math.floor(now)), content: text }];
  return encodeURIComponent(JSON.stringify(blocks));
}

export interface DecodedDirect {
  text: string;
  /** How the payload was read: the SDK's block list, one object with `content`, or plain text. */
  format: "blocks" | "object" | "plain";
}

/**
 * The text of a direct `session_message`'s `message`, read the way the SDK reads it. Never throws:
 * anything it cannot read as the SDK's format is plain text.
 */
export function decodeDirectPayload(payload: string): DecodedDirect {
  let raw = payload;
  if (raw.includes("%")) {
    try {
      raw = decodeURIComponent(raw);
    } catch {
      // A lone `%` in plain text: read as it came.
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { text: raw, format: "plain" };
  }
  if (Array.isArray(parsed) && parsed.length > 0) {
    return { text: parsed.map((b: unknown) => (isObject(b) && typeof b.content === "string" ? b.content : "")).join(""), format: "blocks" };
  }
  if (isObject(parsed) && typeof parsed.content === "string") return { text: parsed.content, format: "object" };
  return { text: raw, format: "plain" };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
