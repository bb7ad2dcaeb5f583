// The seam between the network layer and direct conversations (src/direct/): an identity's
// one-to-one sessions with other agents and people. The network accepts every invite (as the
// official SDKs do), reads the SDK's message format, and hands up "peer X wrote this text on
// session S"; it sends text back on the peer's session, or opens one when there is none. It knows
// nothing about who may talk to the agent or what to answer.

/** One direct message as the network delivered it. */
export interface DirectMessage {
  /** The sender's aid, as the message service authenticated it. */
  peer: string;
  /** The session it came on: the answer goes back on it. */
  sessionId: string;
  /** The `message_id` of the frame (milliseconds as a string on the SDK; not unique on its own). */
  messageId: string;
  /** The text, decoded from the SDK's block list (or taken plain). */
  text: string;
  /** The frame's `timestamp` (service time, ms) when it carried one, else the local time it arrived. */
  at: number;
  /** The raw `message` string, for a key that tells two messages of one millisecond apart. */
  payload: string;
}

export interface DirectLink {
  readonly aid: string;
  /** Every direct message from now on; returns the unsubscribe. */
  onDirect(listener: (message: DirectMessage) => void): () => void;
  /**
   * Sends `text` to `peer` in the SDK's format: on `sessionId` when it is a live session with that
   * peer, else on the newest live one, else on a new session (created, the peer invited). Rejects
   * with a NetworkError (`NOT_CONNECTED` when the socket is down, `BAD_REPLY` when the peer could
   * not be invited).
   */
  sendDirect(p: { peer: string; text: string; sessionId?: string | undefined }): Promise<{ sessionId: string }>;
}

/** The link's direct side, when it has one (the network's agent does; an in-memory test link may not). */
export function directLinkOf(link: object): DirectLink | undefined {
  const l = link as Partial<DirectLink>;
  return typeof l.onDirect === "function" && typeof l.sendDirect === "function" ? (link as DirectLink) : undefined;
}
