/**
 * Delivers one event to the local app until it answers 2xx: every attempt is rebuilt (fresh
 * signature time), bounded in time, and failures (no connection, non-2xx, timeout) are retried
 * with exponential backoff (p-retry) without limit, because `gateway listen` must not skip an
 * event: its cursor moves only past events the app accepted. Only the caller's signal stops it.
 */
import pRetry, { AbortError } from "p-retry";
import { setTraceHeaders } from "../tracing/trace-context.ts";
import type { TraceHeaders } from "../tracing/tracing-port.ts";
import type { ForwardRequest } from "./build-forward-request.ts";

export interface ForwardOptions {
  /** First wait after a failure, ms. Default 500. */
  minDelayMs?: number;
  /** Longest wait between attempts, ms. Default 30000. */
  maxDelayMs?: number;
  /** Per-attempt limit, ms. Default 30000. */
  attemptTimeoutMs?: number;
  /** Stops retrying (shutdown); the promise then rejects. */
  signal?: AbortSignal;
  /** Told about each failed attempt: the status or a short error, and the wait before the next. */
  onFailure?(failure: { status?: number; error?: string; attempt: number; latencyMs: number }): void;
  /** Default: the runtime's fetch. */
  fetch?: typeof fetch;
  /** W3C Trace Context sent with every attempt (`traceparent`, `tracestate` headers). */
  trace?: TraceHeaders;
}

export interface ForwardOutcome {
  status: number;
  /** Latency of the successful attempt, ms. */
  latencyMs: number;
  attempts: number;
}

class AttemptFailed extends Error {
  constructor(
    readonly status: number | undefined,
    message: string,
    readonly latencyMs: number,
  ) {
    super(message);
  }
}

/** Short text of a failed fetch (connection refused, timeout) without stack or URL noise. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (error instanceof Error && error.name === "TimeoutError") return "timeout";
  return error instanceof Error ? error.message : String(error);
}

/** POSTs `build()` to `target` until a 2xx answer. */
export async function forwardEvent(
  target: string,
  build: () => Promise<ForwardRequest>,
  options: ForwardOptions = {},
): Promise<ForwardOutcome> {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.attemptTimeoutMs ?? 30_000;
  let attempts = 0;
  const attempt = async (): Promise<ForwardOutcome> => {
    attempts++;
    const request = await build();
    if (options.trace) setTraceHeaders(request.headers, options.trace);
    const started = performance.now();
    const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
    let response: Response;
    try {
      response = await doFetch(target, {
        method: "POST",
        headers: request.headers,
        body: request.body as Uint8Array<ArrayBuffer>,
        redirect: "manual",
        signal: AbortSignal.any(signals),
      });
    } catch (error) {
      if (options.signal?.aborted) throw new AbortError("listener stopping");
      throw new AttemptFailed(undefined, describe(error), performance.now() - started);
    }
    await response.body?.cancel();
    const latencyMs = performance.now() - started;
    if (response.status >= 200 && response.status < 300) return { status: response.status, latencyMs, attempts };
    throw new AttemptFailed(response.status, `HTTP ${response.status}`, latencyMs);
  };
  return pRetry(attempt, {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: options.minDelayMs ?? 500,
    maxTimeout: options.maxDelayMs ?? 30_000,
    factor: 2,
    randomize: true,
    signal: options.signal,
    onFailedAttempt: ({ error, attemptNumber }) => {
      const failed = error instanceof AttemptFailed ? error : undefined;
      options.onFailure?.({
        status: failed?.status,
        error: failed ? (failed.status === undefined ? failed.message : undefined) : error.message,
        attempt: attemptNumber,
        latencyMs: failed?.latencyMs ?? 0,
      });
    },
  });
}
