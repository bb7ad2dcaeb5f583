// The group modules' name for the case-insensitive compare of the wire (../wire/equals-lower.ts).
export { equalsLower } from "../wire/equals-lower.ts";
