// What every group of one identity would otherwise build again: the stable ACP prompt (about
// 2 KB, the same bytes for every group by design) and the set of human senders. Built once per
// identity object and shared, so a runtime group costs its own state only. Keyed weakly: an
// identity dropped by a config reload takes its entry with it.
import type { PromptIdentity } from "./prompt.ts";
import { buildAcpSystemPrompt } from "./prompt.ts";
import { buildHumanSet } from "./loop-guard.ts";

const prompts = new WeakMap<PromptIdentity, string>();
const humanSets = new WeakMap<readonly string[], Map<string, ReadonlySet<string>>>();

/** {@link buildAcpSystemPrompt}, built once per identity object. */
export function sharedAcpSystemPrompt(identity: PromptIdentity): string {
  let prompt = prompts.get(identity);
  if (prompt === undefined) prompts.set(identity, (prompt = buildAcpSystemPrompt(identity)));
  return prompt;
}

/** {@link buildHumanSet}, built once per (humans list, owner). Read-only: never mutate it. */
export function sharedHumanSet(humans: readonly string[], owner: string | undefined): ReadonlySet<string> {
  let byOwner = humanSets.get(humans);
  if (!byOwner) humanSets.set(humans, (byOwner = new Map()));
  const key = owner ?? "";
  let set = byOwner.get(key);
  if (!set) byOwner.set(key, (set = buildHumanSet(humans, owner)));
  return set;
}
