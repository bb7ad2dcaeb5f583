// Membership actions of the local group service: joining by invite code, join requests, and
// listing a member's groups. Members come from the configuration plus those who joined (kept in
// the history store so a restarted service remembers them). No sessions here.
import { randomBytes } from "node:crypto";
import { describe, type Plain } from "../wire/plain.ts";
import { RESULT_CODES } from "../wire/result-codes.ts";
import type { ActionResult, GroupDefinition, GroupMember } from "./actions.ts";
import type { GroupHistoryStore } from "./history-store.ts";

const ok = (data: unknown = null): ActionResult => ({ code: RESULT_CODES.OK, data, error: "" });
const fail = (code: number, error: string): ActionResult => ({ code, data: null, error });

export const MEMBERSHIP_ACTIONS = new Set(["use_invite_code", "request_join", "list_my_groups", "leave_group"]);

export class Membership {
  readonly #groups: Readonly<Record<string, GroupDefinition>>;
  readonly #store: GroupHistoryStore;
  /** Join requests waiting for approval, per group (local only: a restart forgets them). */
  readonly #requests = new Map<string, Map<string, string>>();
  /** members() per group, built on first ask and dropped when someone joins (every request asks). */
  readonly #members = new Map<string, ReadonlyMap<string, GroupMember>>();

  constructor(groups: Readonly<Record<string, GroupDefinition>>, store: GroupHistoryStore) {
    this.#groups = groups;
    this.#store = store;
    for (const [groupId, group] of Object.entries(groups)) {
      if (group.inviteCode) store.setInviteCode(groupId, group.inviteCode);
      else if (!store.inviteCode(groupId)) store.setInviteCode(groupId, randomBytes(9).toString("base64url"));
    }
  }

  has(groupId: string): boolean {
    return Object.hasOwn(this.#groups, groupId);
  }

  members(groupId: string): ReadonlyMap<string, GroupMember> {
    const cached = this.#members.get(groupId);
    if (cached) return cached;
    const group = this.#groups[groupId];
    const out = new Map<string, GroupMember>(group ? Object.entries(group.members) : []);
    // A configured member who left stays out (until it joins again).
    for (const aid of this.#store.left(groupId)) out.delete(aid);
    for (const aid of this.#store.joined(groupId)) if (!out.has(aid)) out.set(aid, group?.members[aid] ?? {});
    if (group) this.#members.set(groupId, out);
    return out;
  }

  isMember(groupId: string, aid: string): boolean {
    return this.has(groupId) && this.members(groupId).has(aid);
  }

  inviteCode(groupId: string): string | undefined {
    return this.#store.inviteCode(groupId);
  }

  /** Adds a member (e.g. an approved request); true when it was not one yet. */
  add(groupId: string, aid: string): boolean {
    if (!this.has(groupId) || this.isMember(groupId, aid)) return false;
    this.#store.addJoined(groupId, aid);
    this.#members.delete(groupId);
    this.#requests.get(groupId)?.delete(aid);
    return true;
  }

  /** Removes a member (it left); true when it was one. */
  remove(groupId: string, aid: string): boolean {
    if (!this.isMember(groupId, aid)) return false;
    this.#store.addLeft(groupId, aid);
    this.#members.delete(groupId);
    return true;
  }

  pendingRequests(groupId: string): string[] {
    return [...(this.#requests.get(groupId)?.keys() ?? [])];
  }

  /** `joined` / `left` name a member added or removed by this request (the service announces it). */
  handle(aid: string, action: string, groupId: unknown, params: Plain): ActionResult & { joined?: string; left?: string } {
    if (action === "list_my_groups") {
      const groups = Object.keys(this.#groups)
        .filter((g) => this.isMember(g, aid))
        .map((g) => ({ group_id: g, name: this.#groups[g]!.name ?? g, member_count: this.members(g).size }));
      return ok({ groups, total: groups.length });
    }
    if (typeof groupId !== "string" || groupId === "") return fail(RESULT_CODES.INVALID_PARAMS, "group_id: required");
    if (!this.has(groupId)) return fail(RESULT_CODES.GROUP_NOT_FOUND, "group not found");
    if (action === "leave_group") {
      // As the SDK's leaveGroup: no params; the member is out at once (and may join again by a link).
      if (!this.remove(groupId, aid)) return fail(RESULT_CODES.NOT_MEMBER, "not a member of this group");
      return { ...ok({ group_id: groupId, status: "left" }), left: aid };
    }
    if (action === "use_invite_code") {
      const code = params.code;
      if (typeof code !== "string" || code === "") return fail(RESULT_CODES.INVALID_PARAMS, `code: expected a non-empty string, got ${describe(code)}`);
      if (code !== this.inviteCode(groupId)) return fail(RESULT_CODES.INVITE_CODE_INVALID, "invite code invalid");
      // Joining twice by the same link is harmless: the member is in either way.
      if (this.isMember(groupId, aid)) return ok({ group_id: groupId, status: "member" });
      this.add(groupId, aid);
      return { ...ok({ group_id: groupId, status: "joined" }), joined: aid };
    }
    // request_join
    if (this.isMember(groupId, aid)) return fail(RESULT_CODES.ALREADY_MEMBER, "already a member");
    const message = params.message ?? "";
    if (typeof message !== "string") return fail(RESULT_CODES.INVALID_PARAMS, `message: expected a string, got ${describe(message)}`);
    if (this.#groups[groupId]!.openJoin) {
      this.add(groupId, aid);
      return { ...ok({ group_id: groupId, status: "joined" }), joined: aid };
    }
    let pending = this.#requests.get(groupId);
    if (!pending) this.#requests.set(groupId, (pending = new Map()));
    if (pending.has(aid)) return fail(RESULT_CODES.REQUEST_EXISTS, "a join request is already waiting");
    pending.set(aid, message.slice(0, 500));
    return ok({ group_id: groupId, status: "pending" });
  }
}
