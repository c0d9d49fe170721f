/**
 * One attempt of one delivery: load the recorded event, hand it to the sink, time it, and
 * describe it for the attempt log. A sink that throws (it should not) or an event that retention
 * already removed become results like any other, so the lane only ever deals with outcomes.
 * With tracing on, the attempt is a span (delivery-spans.ts) whose context travels with it;
 * otherwise the event's recorded context does.
 */

import type { EventRecord, StoreDriver } from "../store/contract.ts";
import { isErased } from "../store/erased-event.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import type { AttemptTracer } from "./delivery-spans.ts";
import type { DeliveryAttempt } from "./outbox-contract.ts";
import { ERASED_CANCEL } from "./scrub-delivery.ts";
import type { AttemptInfo, DeliveryAttemptResult, Sink } from "./sink-contract.ts";

export interface AttemptOutcome {
  result: DeliveryAttemptResult;
  /** The attempt as the outbox logs it. */
  attempt: DeliveryAttempt;
  latencyMs: number;
  /** Source of the event, when it was still in the log. */
  sourceId?: string;
}

/** What the lane knows of an attempt: its number, and the destination's tracer when tracing is on. */
export type AttemptContext = AttemptInfo & { tracer?: AttemptTracer };

/** The sink's view of the attempt: its number and the W3C context it carries (the span's, else the event's). */
function infoFor(context: AttemptContext | undefined, span: TraceSpan | undefined, record: EventRecord): AttemptInfo {
  const trace = span ? span.headers() : record.event.traceparent ? record.event : undefined;
  return { attempt: context?.attempt ?? 1, trace };
}

/** Runs one attempt of `eventId` through `sink` (after `prepare`, e.g. enrichment), started at `at` (epoch ms). */
export async function runAttempt(
  store: StoreDriver,
  sink: Sink,
  eventId: string,
  at: number,
  signal: AbortSignal,
  prepare?: (record: EventRecord, span?: TraceSpan) => Promise<EventRecord>,
  info?: AttemptContext,
): Promise<AttemptOutcome> {
  const started = performance.now();
  let result: DeliveryAttemptResult;
  let sourceId: string | undefined;
  let span: TraceSpan | undefined;
  try {
    const event = await store.get(eventId);
    sourceId = event?.sourceId;
    if (!event) result = { ok: false, permanent: true, error: "the event is no longer in the journal" };
    // An erased event is never delivered: its content is gone (docs/data-lifecycle.md).
    else if (isErased(event)) result = { ok: false, permanent: true, error: ERASED_CANCEL };
    else {
      span = info?.tracer?.start(event, info.attempt);
      result = await sink.deliver(prepare ? await prepare(event, span) : event, signal, infoFor(info, span, event));
    }
  } catch (error) {
    result = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (span) info?.tracer?.end(span, result);
  const latencyMs = performance.now() - started;
  const attempt: DeliveryAttempt = { at, ok: result.ok, latencyMs: Math.round(latencyMs * 10) / 10 };
  if (result.status !== undefined) attempt.status = result.status;
  if (!result.ok) attempt.error = result.error ?? (result.status ? `HTTP ${result.status}` : "failed");
  if (result.code !== undefined) attempt.code = result.code;
  if (result.skipped) attempt.skipped = true;
  if (result.transform !== undefined) attempt.transform = result.transform;
  if (result.logs !== undefined && result.logs.length > 0) attempt.logs = result.logs;
  return { result, attempt, latencyMs, sourceId };
}
