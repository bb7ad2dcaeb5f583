/** Stable machine-readable codes for everything the transport can fail with. */
export type TransportErrorCode =
  | "NOT_CONNECTED"
  | "CONNECTION_LOST"
  | "CLOSED"
  | "REQUEST_TIMEOUT"
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
