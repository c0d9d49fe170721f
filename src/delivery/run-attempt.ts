/**
 * One attempt of one delivery: load the recorded event, hand it to the sink, time it, and
 * describe it for the attempt log. A sink that throws (it should not) or an event that retention
 * already removed become results like any other, so the lane only ever deals with outcomes.
 */

import type { EventRecord, StoreDriver } from "../store/contract.ts";
import { isErased } from "../store/erased-event.ts";
import type { DeliveryAttempt } from "./outbox-contract.ts";
import type { AttemptInfo, DeliveryAttemptResult, Sink } from "./sink-contract.ts";

export interface AttemptOutcome {
  result: DeliveryAttemptResult;
  /** The attempt as the outbox logs it. */
  attempt: DeliveryAttempt;
  latencyMs: number;
  /** Source of the event, when it was still in the log. */
  sourceId?: string;
}

/** Runs one attempt of `eventId` through `sink` (after `prepare`, e.g. enrichment), started at `at` (epoch ms). */
export async function runAttempt(
  store: StoreDriver,
  sink: Sink,
  eventId: string,
  at: number,
  signal: AbortSignal,
  prepare?: (record: EventRecord) => Promise<EventRecord>,
  info?: AttemptInfo,
): Promise<AttemptOutcome> {
  const started = performance.now();
  let result: DeliveryAttemptResult;
  let sourceId: string | undefined;
  try {
    const event = await store.get(eventId);
    sourceId = event?.sourceId;
    if (!event) result = { ok: false, permanent: true, error: "the event is no longer in the journal" };
    // An erased event is never delivered: its content is gone (docs/data-lifecycle.md).
    else if (isErased(event)) result = { ok: false, permanent: true, error: "cancelled: the event was erased" };
    else result = await sink.deliver(prepare ? await prepare(event) : event, signal, info);
  } catch (error) {
    result = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
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
