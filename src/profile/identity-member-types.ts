// One identity's member types at run time: the directory its monitors read, fed by the group
// service's `get_members` answers and by strangers' agent.md (when the network can fetch them).
// The runtime makes one per identity and shares it across the identity's groups.
import { MemberDirectory } from "../members/member-types.ts";
import type { Logger } from "../types.ts";
import { ProfileLookup } from "./member-profile-lookup.ts";
import type { FetchLike } from "./publish.ts";

export interface IdentityMemberTypes {
  /** Pass as `memberTypes` to every monitor of the identity. */
  readonly types: MemberDirectory;
  /** An inbound message's sender: fetches its agent.md when its type is unknown (no-op without `fetch`). */
  noteSender(aid: string): void;
  /** The `members` of a `get_members` answer of `groupId` (after joining, and when a member joins). Returns how many carried a type. */
  recordServiceMembers(entries: readonly unknown[], groupId?: string): number;
  close(): void;
}

export function createIdentityMemberTypes(p: {
  humans: readonly string[];
  agents: readonly string[];
  owner?: string | undefined;
  /** Where agent.md lives (`https://<aid>/agent.md`); absent → no profile lookups. */
  fetch?: FetchLike | undefined;
  logger: Logger;
  /** Local clock. */
  now: () => number;
}): IdentityMemberTypes {
  const types = new MemberDirectory({ humans: p.humans, agents: p.agents, owner: p.owner });
  const lookup = p.fetch ? new ProfileLookup({ directory: types, fetch: p.fetch, logger: p.logger, now: p.now }) : undefined;
  return {
    types,
    noteSender: (aid) => lookup?.noteSender(aid),
    recordServiceMembers: (entries, groupId) => types.recordServiceMembers(entries, groupId),
    close: () => lookup?.close(),
  };
}
