/**
 * How deliveries and destinations look in the admin API and in `GET /events/{id}`: snake_case,
 * RFC 3339 times, attempts with status, latency and error. Errors never hold secrets or bodies.
 */
import type { DestinationHealth } from "./delivery-admin.ts";
import { type DeliveryRecord, isTerminal } from "./outbox-contract.ts";

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** One delivery record as JSON. */
export function toDeliveryJson(record: DeliveryRecord) {
  return {
    event_id: record.eventId,
    destination: record.destinationId,
    state: record.state,
    subject: record.subject ?? null,
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
    next_attempt_at: isTerminal(record.state) ? null : iso(record.nextAttemptAt),
    failures: record.failures,
    last_error: record.lastError ?? null,
    attempts: record.attempts.map((a) => ({
      at: iso(a.at),
      ok: a.ok,
      status: a.status ?? null,
      latency_ms: a.latencyMs,
      error: a.error ?? null,
      // Present only for destinations with a transform (docs/transformations.md).
      ...(a.code !== undefined ? { code: a.code } : {}),
      ...(a.skipped ? { skipped: true } : {}),
      ...(a.transform !== undefined ? { transform: a.transform } : {}),
      ...(a.logs !== undefined ? { logs: a.logs } : {}),
    })),
  };
}

/** One destination's health as JSON. */
export function toDestinationJson(health: DestinationHealth) {
  return {
    id: health.id,
    type: health.type,
    state: health.state,
    reason: health.reason ?? null,
    breaker: {
      state: health.breaker.state,
      consecutive_failures: health.breaker.consecutiveFailures,
      probe_at: iso(health.breaker.probeAt),
    },
    backlog: health.waiting + health.inflight,
    inflight: health.inflight,
    counts: health.counts,
    last_error: health.lastError ? { at: iso(health.lastError.at), error: health.lastError.error } : null,
    last_success_at: iso(health.lastSuccessAt),
  };
}
