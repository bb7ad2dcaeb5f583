/** Stable machine-readable codes for everything the transport can fail with. */
export type TransportErrorCode =
  | "NOT_CONNECTED"
  | "CONNECTION_LOST"
  | "CLOSED"
  | "REQUEST_TIMEOUT"
  /** The response was larger than the client reads; `msgIds` are the message ids found in it. */
  | "RESPONSE_TOO_LARGE"
  /** A send_message whose content and metadata exceed the message size limit; nothing was sent. */
  | "MESSAGE_TOO_LARGE"
  | "REQUEST_FAILED"
  | "RATE_LIMITED"
  | "BAD_RESPONSE"
  | "UNKNOWN_GROUP"
  | "AUTH_REJECTED"
  | "INVALID_ARGUMENT";

export interface TransportErrorContext {
  action?: string;
  groupId?: string;
  requestId?: string;
  /** ACP result code of the response, when the server answered with one. */
  resultCode?: number;
  /** HTTP status of a refused WebSocket upgrade. */
  httpStatus?: number;
  attempts?: number;
  /** Message ids found in a response too large to read (at most 100). */
  msgIds?: number[];
  bytes?: number;
  limit?: number;
}

/** A transport failure. Log it; never post its text into a group. */
export class TransportError extends Error {
  readonly code: TransportErrorCode;
  readonly context: TransportErrorContext;
  constructor(code: TransportErrorCode, message: string, context: TransportErrorContext = {}) {
    super(message);
    this.name = "TransportError";
    this.code = code;
    this.context = context;
  }
}
