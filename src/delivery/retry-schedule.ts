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
  const attempts = [...record.attempts, attempt].slice(-MAX_KEPT_ATTEMPTS);
  const base = { ...record, attempts, updatedAt: now };
  if (result.ok && result.skipped) {
    return { record: { ...base, state: "skipped", nextAttemptAt: now, lastError: undefined }, outcome: "skipped" };
  }
  if (result.ok) {
    return { record: { ...base, state: "delivered", nextAttemptAt: now, lastError: undefined }, outcome: "delivered" };
  }
  const failures = record.failures + 1;
  const error = attempt.error ?? "failed";
  const delay =
    result.permanent || result.disableDestination
      ? undefined
      : retryDelayMs(policy, failures, random, result.retryAfterMs);
  if (delay === undefined) {
    return { record: { ...base, state: "dead", failures, nextAttemptAt: now, lastError: error }, outcome: "dead" };
  }
  return {
    record: { ...base, state: "failed-retrying", failures, nextAttemptAt: now + delay, lastError: error },
    outcome: "retry",
  };
}
