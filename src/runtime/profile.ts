// One identity's part in the network's profiles, for the runtime: publishing its agent.md after
// sign-in, and the member directory its monitors read — fed by the group service's `get_members`
// (at start and when a member joins) and by unknown senders' own agent.md. Nothing here can stop
// the identity: every failure is one log line.
import type { MemberDirectory } from "../members/member-types.ts";
import { errorFields } from "../log.ts";
import { tlsFromNetwork } from "../network/from-config.ts";
import { createAgentMdFetch } from "../profile/agent-md-fetch.ts";
import { createIdentityMemberTypes } from "../profile/identity-member-types.ts";
import { publishProfileIfChanged, type ProfileSyncResult } from "../profile/profile-sync.ts";
import type { FetchLike } from "../profile/publish.ts";
import type { GroupConnection } from "../transport/connection.ts";
import type { ChannelConfig, IdentityConfig, Logger } from "../types.ts";
import { computeBackoffDelay } from "../util/backoff.ts";
import { createGroupProfiles, type GroupProfiles } from "./group-profiles.ts";

export interface IdentityProfile {
  /** Pass as `memberTypes` to every monitor of the identity. */
  readonly memberTypes: MemberDirectory;
  /** An accepted message's sender: its agent.md is fetched when its type is unknown. */
  noteSender(aid: string): void;
  /** Reads `get_members` of a group into the directory; resolves (never rejects) with how many members carried a type. */
  refreshMembers(connection: GroupConnection, groupId: string): Promise<number>;
  /** What each group's service says about it (announcement, rules, max_message_size): the monitors' group layer. */
  readonly groups: GroupProfiles;
  /**
   * Publishes the identity's agent.md once `signedIn` resolves, with the link's current
   * message-service token; only when it changed since the last publish. A failed publish is
   * retried with backoff (PUBLISH_RETRY) until it succeeds or the identity closes. Resolves, never rejects.
   */
  publishAfterSignIn(link: { token?: () => string | undefined }, signedIn: Promise<unknown> | undefined): Promise<ProfileSyncResult | undefined>;
  /** Where the identity's agent.md stands: `pending` until a publish succeeded (retried with backoff). */
  readonly publishState: ProfilePublishState;
  /**
   * Aborts profile requests in flight; later results are ignored. Resolves once a publish under
   * way is over, its state write (profile.json) included: nothing is written after. Never rejects.
   */
  close(): Promise<void>;
}

/**
 * `waiting`: not signed in yet; `pending`: signed in, not published yet (retrying); `published`:
 * published or already up to date; `off`: nothing to publish (disabled, no profile host, refused).
 */
export type ProfilePublishState = "waiting" | "pending" | "published" | "off";

/** A failed agent.md publish is tried again after 2 s, doubling to at most 5 min (half of each step random). */
export const PUBLISH_RETRY = { baseMs: 2000, maxMs: 300_000, jitter: 0.5 };

/**
 * Where an identity's agent.md requests go when the caller did not say: its access point URL
 * when one is configured (that server hosts its identities' profiles, the aid as Host), else
 * `https://<aid>/agent.md`; with `network.caFile` / `insecureTls` either way.
 */
export function profileFetchFromConfig(config: ChannelConfig, identity: Pick<IdentityConfig, "accessPointUrl">): FetchLike {
  return createAgentMdFetch({ tls: tlsFromNetwork(config.network), via: identity.accessPointUrl });
}

/**
 * The agent.md client of a runtime identity: the caller's (null: none); else, when the runtime
 * connects the identity itself, one from the config; none when a link is injected (a test or
 * in-process network has no profile host). A bad CA file is a warning, never a stop.
 */
export function resolveProfileFetch(p: {
  profileFetch?: FetchLike | null | undefined;
  link?: unknown;
  connect?: unknown;
  config: ChannelConfig;
  identity: IdentityConfig;
  logger: Logger;
}): FetchLike | undefined {
  if (p.profileFetch !== undefined) return p.profileFetch ?? undefined;
  if (p.link || p.connect) return undefined;
  try {
    return profileFetchFromConfig(p.config, p.identity);
  } catch (err) {
    p.logger.log("warn", "profile.fetch-unavailable", { aid: p.identity.aid, ...errorFields(err) });
    return undefined;
  }
}

export function createIdentityProfile(p: {
  config: ChannelConfig;
  identityId: string;
  identity: IdentityConfig;
  /** Where agent.md lives; undefined → nothing is published or fetched (types from config and the service only). */
  fetch: FetchLike | undefined;
  stateDir: string;
  logger: Logger;
  /** Local clock. */
  now: () => number;
  /** For the publish retry's jitter. */
  random?: (() => number) | undefined;
}): IdentityProfile {
  const { logger } = p;
  const abort = new AbortController();
  // Every profile request ends when the identity closes: no socket outlives it.
  const fetch: FetchLike | undefined = p.fetch
    ? (url, init) => p.fetch!(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal })
    : undefined;
  const groups = createGroupProfiles(logger);
  const mt = createIdentityMemberTypes({ humans: p.config.humans, agents: p.config.agents, owner: p.identity.owner, fetch, logger, now: p.now });

  const refreshMembers = async (connection: GroupConnection, groupId: string): Promise<number> => {
    try {
      const data = await connection.request("get_members", { groupId });
      const members = data && typeof data === "object" && Array.isArray((data as { members?: unknown }).members) ? (data as { members: unknown[] }).members : [];
      const typed = mt.recordServiceMembers(members, groupId);
      logger.log("debug", "runtime.member-types", { group: groupId, members: members.length, typed });
      return typed;
    } catch (err) {
      if (!abort.signal.aborted) logger.log("warn", "runtime.get-members-failed", { group: groupId, service: connection.peer, ...errorFields(err) });
      return 0;
    }
  };

  let publishState: ProfilePublishState = p.fetch ? "waiting" : "off";
  /** Waits `ms`, or less when the identity closes; the one timer of the publish, cleared on close. */
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        abort.signal.removeEventListener("abort", done);
        resolve();
      }
      abort.signal.addEventListener("abort", done, { once: true });
    });

  // An upload cut by this identity's own close (a quick stop while the host still writes it) is
  // no failure: one debug line, never a warning on every stop.
  const publishLogger: Logger = {
    log: (level, event, fields) =>
      abort.signal.aborted && event === "profile.publish-failed" ? logger.log("debug", "profile.publish-stopped", fields) : logger.log(level, event, fields),
  };

  // The publish under way, if any: close waits for it, so its state write never lands after close.
  let inFlight: Promise<ProfileSyncResult> | undefined;

  const publishAfterSignIn: IdentityProfile["publishAfterSignIn"] = async (link, signedIn) => {
    if (!fetch) return undefined;
    if (typeof link.token !== "function") {
      // A link that does not sign in (an in-process test network) has no token to publish with.
      logger.log("debug", "profile.publish-skipped", { aid: p.identity.aid, reason: "link-without-sign-in" });
      publishState = "off";
      return undefined;
    }
    publishState = "pending";
    try {
      await signedIn;
    } catch {
      // The identity never signed in (refused or closed first): that is reported where it happens.
      publishState = "off";
      return undefined;
    }
    // Until it succeeds: a network that refused or lost the upload (a restart, a full server)
    // would otherwise leave the identity unknown as an agent to everyone for the whole run.
    for (let attempt = 0; ; attempt++) {
      if (abort.signal.aborted) return undefined;
      const token = link.token!();
      const call = publishProfileIfChanged({ identityId: p.identityId, identity: p.identity, token, stateDir: p.stateDir, fetch, logger: publishLogger, now: p.now });
      inFlight = call;
      const result = await call.finally(() => {
        if (inFlight === call) inFlight = undefined;
      });
      if (abort.signal.aborted) return undefined;
      const retry = result.action === "skipped" && (result.reason === "publish-failed" || result.reason === "no-token");
      if (!retry) {
        publishState = result.action === "skipped" ? "off" : "published";
        return result;
      }
      const retryInMs = computeBackoffDelay(attempt, PUBLISH_RETRY, p.random ?? Math.random);
      logger.log("info", "profile.publish-retry", { aid: p.identity.aid, attempt: attempt + 1, retryInMs });
      await pause(retryInMs);
    }
  };

  return {
    memberTypes: mt.types,
    noteSender: (aid) => mt.noteSender(aid),
    refreshMembers,
    groups,
    publishAfterSignIn,
    get publishState() {
      return publishState;
    },
    async close() {
      abort.abort();
      mt.close();
      groups.close();
      // An upload the host already answered is recorded, not lost; one still waiting is cut by the abort.
      await inFlight;
    },
  };
}
