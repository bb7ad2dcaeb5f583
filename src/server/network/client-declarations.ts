// Which program each aid last signed in to the message service with, as its `client_info` said
// (the first sign-in step carries it; the second, which proves the key, completes it). Only what
// the operator chooses to trust comes of it: with `peopleFromChat` the group service reports an
// aid whose latest sign-in came from `acp-group chat` as a person. Bounded.
import { BoundedMap } from "../../util/bounded-map.ts";
import { declaresPerson } from "../../wire/client-info.ts";

const MAX_PENDING = 10_000;
const MAX_DECLARED = 100_000;

export class ClientDeclarations {
  /** request_id of a first sign-in step → who and what it declared, until the second step. */
  readonly #pending = new BoundedMap<string, { aid: string; clientInfo: string | undefined }>(MAX_PENDING);
  /** aid (lower case) → the client_info of its latest completed message-service sign-in. */
  readonly #declared = new BoundedMap<string, string | undefined>(MAX_DECLARED);

  /** A first sign-in step (a nonce asked for). */
  noteNonce(aid: string, requestId: string, clientInfo: string | undefined): void {
    this.#pending.set(requestId, { aid: aid.toLowerCase(), clientInfo: clientInfo?.slice(0, 200) });
  }

  /** A sign-in completed (the key proved); only the message service's counts (that is where a session's socket signs in). */
  signedIn(aid: string, requestId: string, where: "accesspoint" | "message"): void {
    const pending = this.#pending.get(requestId);
    this.#pending.delete(requestId);
    if (where !== "message" || !pending || pending.aid !== aid.toLowerCase()) return;
    this.#declared.set(pending.aid, pending.clientInfo);
  }

  /** Did the aid's latest message-service sign-in come from a person's client? */
  signedInAsPerson(aid: string): boolean {
    return declaresPerson(this.#declared.get(aid.toLowerCase()));
  }
}
