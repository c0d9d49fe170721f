/**
 * undici's (legacy, callback) dispatch handler of one attempt to an `http` destination: keeps
 * only the answer's status and Retry-After (no response stream, no header object) and drops
 * the body, reading at most `DRAIN_LIMIT` bytes of it before giving up the connection instead.
 * It also holds the attempt's deadline timer and its place among the attempts the lane's
 * shutdown signal aborts, and settles the attempt exactly once: one object per attempt, no
 * closures.
 */
import type { HttpSendResult } from "../../src/delivery/http/http-sink.ts";
import { toTransportFailure } from "../../src/delivery/http/transport-failure.ts";
import { SSRF_REFUSED } from "./guarded-lookup.ts";

/** Read of an answer's body before the connection is dropped instead (as undici's `dump`). */
const DRAIN_LIMIT = 64 * 1024;

/** The deadline of an attempt passed: abort it (module-level, so no timer callback per attempt). */
function onDeadline(handler: AttemptHandler): void {
  handler.timedOut = true;
  handler.abort(new Error(`no answer within ${handler.timeoutMs} ms`));
}

/** The code of undici's error (or of its cause), the SSRF guard's refusal first. */
function findCode(error: unknown): string | undefined {
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    e = e.cause as typeof e, i++
  ) {
    if (typeof e.code === "string") {
      if (e.code === SSRF_REFUSED) return SSRF_REFUSED;
      if (e.code !== "UND_ERR_SOCKET" || !e.cause) return e.code;
    }
  }
  return undefined;
}

/** What a failed attempt was, from undici's error (src/delivery/http/transport-failure.ts). */
function toFailure(error: Error, timedOut: boolean, signal: AbortSignal, timeoutMs: number): HttpSendResult {
  const code = findCode(error);
  return toTransportFailure(
    {
      refusal: code === SSRF_REFUSED ? error.message : undefined,
      timedOut: timedOut || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT",
      aborted: signal.aborted,
      detail: code ?? error.name,
    },
    timeoutMs,
  );
}

/**
 * One attempt: `resolve` gets the answer, or what ended the attempt without one. Registered in
 * `attempts` (aborted together on shutdown) until it settles; its deadline is `timeoutMs`.
 */
export class AttemptHandler {
  #abort: ((reason?: Error) => void) | undefined;
  /** Why the attempt was aborted before it reached a socket. */
  #pending: Error | undefined;
  #status = 0;
  #retryAfter: string | undefined;
  #drained = 0;
  #settled = false;
  readonly #timer: ReturnType<typeof setTimeout>;
  timedOut = false;

  constructor(
    readonly resolve: (result: HttpSendResult) => void,
    readonly signal: AbortSignal,
    readonly timeoutMs: number,
    readonly attempts: Set<AttemptHandler>,
  ) {
    attempts.add(this);
    this.#timer = setTimeout(onDeadline, timeoutMs, this);
  }

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
    if (!this.#finish()) return;
    this.resolve(toFailure(error, this.timedOut, this.signal, this.timeoutMs));
  }

  #settle(): void {
    if (!this.#finish()) return;
    this.resolve({ ok: true, status: this.#status, retryAfter: this.#retryAfter });
  }

  /** Marks the attempt settled (false when it already was): its timer and registration go. */
  #finish(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.attempts.delete(this);
    return true;
  }
}
