// What every group of one identity would otherwise build again: the stable ACP prompt (about
// 2 KB, the same bytes for every group by design). Built once per identity object and shared,
// so a runtime group costs its own state only. Keyed weakly: an identity dropped by a config
// reload takes its entry with it.
import type { PromptIdentity } from "./prompt.ts";
import { buildAcpSystemPrompt } from "./prompt.ts";

const prompts = new WeakMap<PromptIdentity, string>();

/** {@link buildAcpSystemPrompt}, built once per identity object. */
export function sharedAcpSystemPrompt(identity: PromptIdentity): string {
  let prompt = prompts.get(identity);
  if (prompt === undefined) prompts.set(identity, (prompt = buildAcpSystemPrompt(identity)));
  return prompt;
}
