// The two kinds of conversation an identity has — groups, and direct (one-to-one) conversations —
// as the engine, the back-ends and a host tell them apart, and the pairing hook a host gives for
// direct messages. Types only; re-exported by types.ts.

/**
 * Which conversation a dispatch belongs to: a group, or a direct (one-to-one) conversation with
 * one peer. A back-end tells them apart by `kind` (the OpenClaw host's `ChatType` "group" or
 * "direct"); a direct conversation's `groupId` elsewhere is its key, `dm:<peer>` (src/direct/journal.ts).
 */
export type ConversationRef = { kind: "group"; groupId: string } | { kind: "direct"; peer: string };

/**
 * The pairing hook of `dmPolicy: "pairing"`. Standalone it is a pairing store in the state
 * directory (`acp-group pairing approve`); inside OpenClaw, the host's pairing flow (its
 * allow-from store and pairing replies). Called only for senders no list admits. `identityId` is
 * the identity's id in the config (the OpenClaw account), `aid` its agent id.
 */
export interface DirectPairing {
  /** Has `peer` been approved? Read again for every message of a sender still unknown. */
  isApproved(p: { identityId: string; aid: string; peer: string }): Promise<boolean> | boolean;
  /**
   * An unknown sender wrote: record (or refresh) their pairing request. The one line to send them
   * (carrying the code and how to get it approved), or undefined to send nothing (told already).
   */
  request(p: { identityId: string; aid: string; peer: string; now: number }): Promise<{ reply?: string | undefined }>;
}
