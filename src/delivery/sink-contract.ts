/**
 * The sink contract: one delivery attempt of one recorded event to one destination. The
 * delivery engine (outbox, retries, breaker, dead letters) lives in src/delivery and is the same
 * for every sink; each transport (signed HTTP, Redis Streams, SMTP, and later Cloudflare Queues
 * and an HTTP mail API) implements only `deliver`. Sinks never throw for a failed attempt: they
 * return the outcome, which the engine turns into the next state.
 */
import type { EventRecord } from "../store/contract.ts";
import type { TraceHeaders } from "../tracing/tracing-port.ts";

export interface DeliveryAttemptResult {
  ok: boolean;
  /** Status code when the transport has one (HTTP status, SMTP reply code). */
  status?: number;
  /** The destination asked to wait this long before the next attempt (Retry-After). */
  retryAfterMs?: number;
  /** The destination is gone for good (HTTP 410): disable it, stop retrying. */
  disableDestination?: boolean;
  /** A failure that retrying cannot fix (e.g. SSRF refusal, invalid recipient): dead-letter now. */
  permanent?: boolean;
  /** What went wrong, for the attempt log. Never secrets or response bodies. */
  error?: string;
}

export interface Sink {
  /** The destination id this sink delivers to. */
  readonly destinationId: string;
  /**
   * Makes one attempt; resolves with its outcome (never rejects for delivery failures). `trace`:
   * the W3C context the attempt carries to the destination (`traceparent` header or field).
   */
  deliver(record: EventRecord, signal: AbortSignal, trace?: TraceHeaders): Promise<DeliveryAttemptResult>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** What every configured destination has (the full variants live in src/config/schema.ts). */
export interface DestinationShape {
  id: string;
  type: string;
}

/** A typed factory per transport, as for store drivers. */
export type SinkFactory<Destination extends DestinationShape = DestinationShape, Deps = unknown> = (
  destination: Destination,
  deps: Deps,
) => Sink;

/**
 * Wraps one transport's attempt in what every sink shares: no attempt after `close` or on an
 * aborted signal, a throwing transport counted as a retryable failure (never an exception out of
 * `deliver`), and an idempotent `close`.
 */
export function createSink(
  destinationId: string,
  transportName: string,
  attempt: (record: EventRecord, signal: AbortSignal, trace?: TraceHeaders) => Promise<DeliveryAttemptResult>,
  closeTransport: () => Promise<void>,
): Sink {
  let closed: Promise<void> | undefined;
  return {
    destinationId,
    async deliver(record, signal, trace) {
      if (closed) return { ok: false, error: "sink closed" };
      if (signal.aborted) return { ok: false, error: "attempt aborted" };
      try {
        return await attempt(record, signal, trace);
      } catch (error) {
        const name = error instanceof Error ? error.name : "unknown";
        return { ok: false, error: `${transportName} transport failed (${name})` };
      }
    },
    close() {
      closed ??= closeTransport().catch(() => undefined);
      return closed;
    },
  };
}
