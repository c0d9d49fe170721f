/**
 * Turns the outcome of one attempt into the record's next state: delivered, retry later
 * (exponential schedule with jitter, at least as long as the destination's Retry-After), or dead
 * when the schedule is exhausted or the failure is permanent. Pure: time and randomness come in.
 */

import type { DeliveryPolicy } from "./delivery-policy.ts";
import { type DeliveryAttempt, type DeliveryRecord, MAX_KEPT_ATTEMPTS } from "./outbox-contract.ts";
import type { DeliveryAttemptResult } from "./sink-contract.ts";

/** A Retry-After longer than this is capped: a destination cannot park a delivery for days. */
export const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

export type AttemptOutcome = "delivered" | "retry" | "dead" | "skipped";

/**
 * Milliseconds to wait before retry number `failures` (1-based), or undefined when the schedule
 * is exhausted. `random` is in [0, 1).
 */
export function retryDelayMs(
  policy: Pick<DeliveryPolicy, "retrySchedule" | "jitter">,
  failures: number,
  random: number,
  retryAfterMs?: number,
): number | undefined {
  const base = policy.retrySchedule[failures - 1];
  if (base === undefined) return undefined;
  const spread = 1 + policy.jitter * (random * 2 - 1);
  const scheduled = Math.round(base * 1000 * spread);
  return retryAfterMs === undefined ? scheduled : Math.max(scheduled, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Applies one attempt's result to a record; returns the new record and what happened. */
export function applyAttemptResult(
  record: DeliveryRecord,
  result: DeliveryAttemptResult,
  attempt: DeliveryAttempt,
  policy: DeliveryPolicy,
  now: number,
  random: number,
): { record: DeliveryRecord; outcome: AttemptOutcome } {
  const kept =
    record.attempts.length < MAX_KEPT_ATTEMPTS ? record.attempts : record.attempts.slice(1 - MAX_KEPT_ATTEMPTS);
  const attempts = [...kept, attempt];
  // One copy of the record per outcome (the same fields, in the same order, as before).
  if (result.ok) {
    const state = result.skipped ? "skipped" : "delivered";
    return {
      record: { ...record, attempts, updatedAt: now, state, nextAttemptAt: now, lastError: undefined },
      outcome: state,
    };
  }
  const failures = record.failures + 1;
  const error = attempt.error ?? "failed";
  const delay =
    result.permanent || result.disableDestination
      ? undefined
      : retryDelayMs(policy, failures, random, result.retryAfterMs);
  if (delay === undefined) {
    return {
      record: { ...record, attempts, updatedAt: now, state: "dead", failures, nextAttemptAt: now, lastError: error },
      outcome: "dead",
    };
  }
  return {
    record: {
      ...record,
      attempts,
      updatedAt: now,
      state: "failed-retrying",
      failures,
      nextAttemptAt: now + delay,
      lastError: error,
    },
    outcome: "retry",
  };
}
