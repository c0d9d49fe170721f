/**
 * One attempt of one delivery: load the recorded event, hand it to the sink, time it, and
 * describe it for the attempt log. A sink that throws (it should not) or an event that retention
 * already removed become results like any other, so the lane only ever deals with outcomes.
 * With tracing on, the attempt is a span (delivery-spans.ts) whose context travels with it;
 * otherwise the event's recorded context does.
 */
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import type { AttemptTracer } from "./delivery-spans.ts";
import type { DeliveryAttempt } from "./outbox-contract.ts";
import type { DeliveryAttemptResult, Sink } from "./sink-contract.ts";

export interface AttemptOutcome {
  result: DeliveryAttemptResult;
  /** The attempt as the outbox logs it. */
  attempt: DeliveryAttempt;
  latencyMs: number;
}

/** What traces an attempt, when tracing is on: the destination's tracer and the attempt number. */
export interface AttemptTrace {
  tracer: AttemptTracer;
  attempt: number;
}

/** Runs one attempt of `eventId` through `sink` (after `prepare`, e.g. enrichment), started at `at` (epoch ms). */
export async function runAttempt(
  store: StoreDriver,
  sink: Sink,
  eventId: string,
  at: number,
  signal: AbortSignal,
  prepare?: (record: EventRecord, span?: TraceSpan) => Promise<EventRecord>,
  trace?: AttemptTrace,
): Promise<AttemptOutcome> {
  const started = performance.now();
  let result: DeliveryAttemptResult;
  let span: TraceSpan | undefined;
  try {
    const event = await store.get(eventId);
    span = event && trace?.tracer.start(event, trace.attempt);
    result = event
      ? await sink.deliver(prepare ? await prepare(event, span) : event, signal, span ? span.headers() : event.event)
      : { ok: false, permanent: true, error: "the event is no longer in the journal" };
  } catch (error) {
    result = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (span) trace?.tracer.end(span, result);
  const latencyMs = performance.now() - started;
  const attempt: DeliveryAttempt = { at, ok: result.ok, latencyMs: Math.round(latencyMs * 10) / 10 };
  if (result.status !== undefined) attempt.status = result.status;
  if (!result.ok) attempt.error = result.error ?? (result.status ? `HTTP ${result.status}` : "failed");
  return { result, attempt, latencyMs };
}
