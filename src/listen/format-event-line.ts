/**
 * The one line `gateway listen` prints per event, and per failed attempt:
 *   2026-11-24T12:00:01.234Z  agreement.completed  agreements/8d5f…  200  12 ms
 *   2026-11-24T12:00:01.234Z  agreement.completed  agreements/8d5f…  503  4 ms  (attempt 2, retrying)
 */
import type { ListenedEvent } from "./listen-frames.ts";

export interface EventLineOutcome {
  /** The app's HTTP status, or a short error (`ECONNREFUSED`, `timeout`). */
  status: number | string;
  latencyMs: number;
  /** Set on failed attempts. */
  retryingAfterAttempt?: number;
}

/** Formats one line for `event` at `nowMs`. */
export function formatEventLine(event: ListenedEvent, outcome: EventLineOutcome, nowMs: number): string {
  const parts = [
    new Date(nowMs).toISOString(),
    event.type,
    event.subject ?? "-",
    String(outcome.status),
    `${Math.round(outcome.latencyMs)} ms`,
  ];
  if (outcome.retryingAfterAttempt !== undefined) parts.push(`(attempt ${outcome.retryingAfterAttempt}, retrying)`);
  return parts.join("  ");
}
