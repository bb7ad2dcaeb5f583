// Liveness of one identity's message socket: a WebSocket ping every interval; a socket that has
// not answered the previous ping by the next one is dead and terminated (its close event then
// redials). One timer, armed when a socket opens, cleared when it closes and on close.
import type WebSocket from "ws";
import type { Logger } from "../types.ts";

export class PingWatch {
  readonly #aid: string;
  readonly #intervalMs: number;
  readonly #logger: Logger;
  /** Pings the open socket; armed on open, cleared on socket close and on close. */
  #timer: ReturnType<typeof setInterval> | undefined;
  #awaitingPong = false;

  constructor(p: { aid: string; intervalMs: number; logger: Logger }) {
    this.#aid = p.aid;
    this.#intervalMs = p.intervalMs;
    this.#logger = p.logger;
  }

  arm(ws: WebSocket): void {
    this.clear();
    this.#awaitingPong = false;
    ws.on("pong", () => {
      this.#awaitingPong = false;
    });
    this.#timer = setInterval(() => {
      if (this.#awaitingPong) {
        this.#logger.log("warn", "network.socket-dead", { aid: this.#aid, note: "no pong since the last ping" });
        ws.terminate();
        return;
      }
      this.#awaitingPong = true;
      ws.ping();
    }, this.#intervalMs);
    this.#timer.unref?.();
  }

  clear(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
