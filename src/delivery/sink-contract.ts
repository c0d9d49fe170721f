/**
 * The sink contract: one delivery attempt of one recorded event to one destination. The
 * delivery engine (outbox, retries, breaker, dead letters) lives in src/delivery and is the same
 * for every sink; each transport (signed HTTP, Redis Streams, SMTP, Cloudflare Queues and
 * an HTTP mail API) implements only `deliver`. Sinks never throw for a failed attempt: they
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
  /** A stable code of the failure, e.g. `transform_error`. */
  code?: string;
  /** The destination's transform returned null: nothing was sent, and nothing will be (state `skipped`). */
  skipped?: boolean;
  /** Version of the transform that ran (src/transform). */
  transform?: string;
  /** The transform's console lines (failed attempts only, at most 20). */
  logs?: string[];
}

/** What a sink may know about the attempt it makes. */
export interface AttemptInfo {
  /** 1 for the first attempt, 2 for the first retry, ... */
  attempt: number;
  /** The W3C context the attempt carries to the destination (docs/tracing.md), when there is one. */
  trace?: TraceHeaders;
}

/** The payload a destination's transform made of the event (src/transform). */
export interface TransformedPayload {
  /** The payload exactly as the transform serialised it: the bytes an http destination signs and sends. */
  json: string;
}

/** A recorded event on its way to a sink, with the transform's payload when its destination has one. */
export type DeliverableRecord = EventRecord & { transformed?: TransformedPayload };

export interface Sink {
  /** The destination id this sink delivers to. */
  readonly destinationId: string;
  /**
   * Makes one attempt; resolves with its outcome (never rejects for delivery failures). `info.trace`:
   * the W3C context the attempt carries to the destination (`traceparent` header or field).
   */
  deliver(record: DeliverableRecord, signal: AbortSignal, info?: AttemptInfo): Promise<DeliveryAttemptResult>;
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
  attempt: (record: DeliverableRecord, signal: AbortSignal, info?: AttemptInfo) => Promise<DeliveryAttemptResult>,
  closeTransport: () => Promise<void>,
): Sink {
  let closed: Promise<void> | undefined;
  // Made once per sink: a throwing transport's outcome (its name only, never the message).
  const thrown = (error: unknown): DeliveryAttemptResult => {
    const name = error instanceof Error ? error.name : "unknown";
    return { ok: false, error: `${transportName} transport failed (${name})` };
  };
  return {
    destinationId,
    // Not an async function: the attempt's own promise is returned, with no extra hop.
    deliver(record, signal, info) {
      if (closed) return Promise.resolve({ ok: false, error: "sink closed" });
      if (signal.aborted) return Promise.resolve({ ok: false, error: "attempt aborted" });
      try {
        return attempt(record, signal, info).then(undefined, thrown);
      } catch (error) {
        return Promise.resolve(thrown(error));
      }
    },
    close() {
      closed ??= closeTransport().catch(() => undefined);
      return closed;
    },
  };
}
