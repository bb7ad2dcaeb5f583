// How an addressing reason is printed (replays, the dispatch log, tests): the rule's name, then
// `:<name>` where the reason carries an addressee — `mention`, `named-us:jacob`,
// `addressed-other:bob`. Pure.
import type { AddressingReason } from "../../types.ts";

/** The reason as printed; null for plain talk (no reason). */
export function addressingLabel(reason: AddressingReason): string;
export function addressingLabel(reason: AddressingReason | undefined): string | null;
export function addressingLabel(reason: AddressingReason | undefined): string | null {
  if (reason === undefined) return null;
  return "name" in reason ? `${reason.rule}:${reason.name}` : reason.rule;
}
