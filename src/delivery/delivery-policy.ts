/**
 * How the engine treats one destination, whatever its transport: retry schedule and jitter,
 * circuit breaker, concurrency, optional rate limit and per-subject ordering. Each destination
 * schema spreads `DeliveryPolicyEntries` into its own object; `resolveDeliveryPolicy` applies the
 * defaults (so a destination type that does not offer a field simply gets the default).
 */
import * as v from "valibot";

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: about a day, then the delivery is dead. */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];

/**
 * Attempts in flight per destination unless configured. A lane completes at most this many
 * attempts per round trip, and a round trip includes a turn of the gateway's event loop and of
 * the destination's: while the gateway is busy (a burst of webhooks, the backlog after a slow
 * disk sync) those turns are long, and 4 slots delivered ~100-150/s while webhooks kept arriving
 * at 500-800/s, so deliveries waited a second or more in the lane (BENCHMARKS.md, delivery
 * latency). 16 keeps a burst's backlog draining faster than it builds on one core.
 */
export const DEFAULT_CONCURRENCY = 16;

const seconds = v.pipe(v.number(), v.minValue(0), v.maxValue(7 * 86_400));

/** valibot entries shared by every destination schema (spread them into `v.strictObject`). */
export const DeliveryPolicyEntries = {
  retry: v.optional(
    v.strictObject({
      /** Seconds before retry 1, 2, ...; when exhausted the delivery is dead. Default about a day. */
      schedule: v.optional(v.pipe(v.array(seconds), v.maxLength(100))),
      /** Each wait is spread by ± this fraction at random (jitter). Default 0.2. */
      jitter: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
    }),
  ),
  breaker: v.optional(
    v.strictObject({
      /** Consecutive failed attempts that open the breaker. Default 5. */
      failures: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))),
      /** Seconds before the first probe; doubles per failed probe up to 10 min. Default 30. */
      cooldownSeconds: v.optional(v.pipe(v.number(), v.minValue(0.001), v.maxValue(3600))),
    }),
  ),
  /** Attempts in flight at once. Default 16 (`DEFAULT_CONCURRENCY`). */
  concurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(256))),
  /** At most this many attempts per second (token bucket, burst of one second). Default none. */
  rateLimitPerSecond: v.optional(v.pipe(v.number(), v.minValue(0.001), v.maxValue(100_000))),
  /** `subject`: events of one subject are delivered in the order received. Default `none`. */
  ordering: v.optional(v.picklist(["none", "subject"])),
};

export interface DeliveryPolicy {
  retrySchedule: readonly number[];
  jitter: number;
  breakerFailures: number;
  breakerCooldownMs: number;
  concurrency: number;
  rateLimitPerSecond?: number;
  ordering: "none" | "subject";
}

type PolicyFields = Partial<v.InferOutput<v.ObjectSchema<typeof DeliveryPolicyEntries, undefined>>>;

/** The effective policy of a destination config (any type), defaults applied. */
export function resolveDeliveryPolicy(destination: object): DeliveryPolicy {
  const fields = destination as PolicyFields;
  return {
    retrySchedule: fields.retry?.schedule ?? DEFAULT_RETRY_SCHEDULE_SECONDS,
    jitter: fields.retry?.jitter ?? 0.2,
    breakerFailures: fields.breaker?.failures ?? 5,
    breakerCooldownMs: (fields.breaker?.cooldownSeconds ?? 30) * 1000,
    concurrency: fields.concurrency ?? DEFAULT_CONCURRENCY,
    rateLimitPerSecond: fields.rateLimitPerSecond,
    ordering: fields.ordering ?? "none",
  };
}
