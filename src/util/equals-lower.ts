// Case-insensitive equality against an already lower-cased string, without allocating: the
// ingest path compares every sender with our own aid and the group service's, and a
// `toLowerCase()` per message (whenever the lengths happen to match) is a string per message.

/** `s.length === lower.length && s.toLowerCase() === lower`, for a `lower` already lower case. */
export function equalsLower(s: string, lower: string): boolean {
  const n = s.length;
  if (n !== lower.length) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    // Outside ASCII, lower-casing is Unicode's business (and may change the length).
    if (c > 0x7f) return s.toLowerCase() === lower;
    if (c === lower.charCodeAt(i)) continue;
    if (c >= 0x41 && c <= 0x5a && c + 0x20 === lower.charCodeAt(i)) continue;
    // Everything before is ASCII, so lower-casing keeps position i where it is: a real mismatch.
    return false;
  }
  return true;
}
