/**
 * undici's (legacy, callback) dispatch handler of one attempt to an `http` destination: keeps
 * only the answer's status and Retry-After (no response stream, no header object) and drops
 * the body, reading at most `DRAIN_LIMIT` bytes of it before giving up the connection instead.
 */
import type { HttpSendResult } from "../../src/delivery/http/http-sink.ts";

/** Read of an answer's body before the connection is dropped instead (as undici's `dump`). */
const DRAIN_LIMIT = 64 * 1024;

/** One attempt: `resolve` gets the answer, `fail` the error that ended the attempt without one. */
export class AttemptHandler {
  #abort: ((reason?: Error) => void) | undefined;
  /** Why the attempt was aborted before it reached a socket. */
  #pending: Error | undefined;
  #status = 0;
  #retryAfter: string | undefined;
  #drained = 0;
  #settled = false;
  timedOut = false;

  constructor(
    readonly resolve: (result: HttpSendResult) => void,
    readonly fail: (error: Error) => void,
  ) {}

  /** Aborts the attempt (timeout or shutdown); the error reaches `onError`. */
  abort(reason: Error): void {
    if (this.#abort) this.#abort(reason);
    else this.#pending ??= reason;
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
    if (this.#pending) abort(this.#pending);
  }

  onHeaders(status: number, raw: Buffer[], _resume: () => void): boolean {
    if (status < 200) return true;
    this.#status = status;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i] as Buffer;
      if (name.length === 11 && name.toString("latin1").toLowerCase() === "retry-after") {
        this.#retryAfter ??= (raw[i + 1] as Buffer).toString("latin1");
      }
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#drained += chunk.length;
    // The answer is known: the rest of a large body is not worth reading (the socket goes).
    if (this.#drained > DRAIN_LIMIT) {
      this.#settle();
      this.#abort?.(new Error("answer body over the drain limit"));
    }
    return true;
  }

  onComplete(): void {
    this.#settle();
  }

  onError(error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.fail(error);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.resolve({ ok: true, status: this.#status, retryAfter: this.#retryAfter });
  }
}
