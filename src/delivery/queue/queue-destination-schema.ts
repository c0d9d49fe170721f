/**
 * The `queue` destination: every routed event is appended to a Redis Stream (XADD) whose length
 * is bounded with approximate trimming (`MAXLEN ~`). Consumers read it directly or through
 * consumer groups (XREADGROUP / XACK). Delivery is at least once: a consumer drops repeats by
 * the `id` field (the gateway event id), which is the same on every copy of one event.
 *
 * Entry fields, in this order:
 * - `id`: gateway event id (`evt_...`), the idempotency key
 * - `type`: event type (`agreement.completed`, `candidate.accepted`, ...)
 * - `source`: the CloudEvent source (`/webhooks/esign`)
 * - `subject`: `agreements/{id}` or `staffing-requests/{id}`, only when the event has one
 * - `time`: the CloudEvent time (RFC 3339)
 * - `payload`: the whole CloudEvent envelope as JSON
 * - `traceparent`, `tracestate`: W3C Trace Context of the attempt, when the event has one
 *   (docs/tracing.md)
 */
import * as v from "valibot";
import { DeliveryPolicyEntries } from "../delivery-policy.ts";

const id = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or -"));

/** `redis://` or `rediss://` with a host; credentials belong in `${ENV}` references. */
const redisUrl = v.pipe(
  v.string(),
  v.check((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname !== "";
    } catch {
      return false;
    }
  }, "a redis:// or rediss:// URL such as redis://127.0.0.1:6379"),
);

export const QueueDestinationSchema = v.strictObject({
  id,
  type: v.literal("queue"),
  /** The queue backend. `redis-streams` (default) on Node. */
  driver: v.optional(v.literal("redis-streams"), "redis-streams"),
  /**
   * Connection URL: `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS.
   * Put the password in the environment: `redis://:${REDIS_PASSWORD}@127.0.0.1:6379`.
   */
  url: redisUrl,
  /** Stream key the events are appended to. */
  stream: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  /** Approximate upper bound on the stream length (`XADD MAXLEN ~`). Default 100000. */
  maxLen: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000_000)), 100_000),
  /** Connect plus command timeout of one attempt, ms. Default 5000. */
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(60_000)), 5_000),
  /** Retry schedule, breaker, concurrency, rate limit and ordering (see delivery-policy.ts). */
  ...DeliveryPolicyEntries,
});

export type QueueDestination = v.InferOutput<typeof QueueDestinationSchema>;
