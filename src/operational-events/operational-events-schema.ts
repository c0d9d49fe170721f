/**
 * When the gateway records its own operational events (docs/data-lifecycle.md): thresholds of
 * a failing destination, of a breaker open long enough to count as disabled, of a spike of
 * failed webhook verifications, and the batching of dead letters.
 */
import * as v from "valibot";

const seconds = (max: number) => v.pipe(v.number(), v.minValue(1), v.maxValue(max));

export const OperationalEventsSchema = v.strictObject({
  /** Record operational events at all. Default true. */
  enabled: v.optional(v.boolean(), true),
  /** `gateway.destination.failing`: at least `minAttempts` attempts in the window, `errorRate` of them failed. */
  failing: v.optional(
    v.strictObject({
      windowSeconds: v.optional(seconds(86_400), 300),
      minAttempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100_000)), 20),
      errorRate: v.optional(v.pipe(v.number(), v.minValue(0.01), v.maxValue(1)), 0.5),
      /** Consecutive successful attempts after which a failing destination has `recovered`. Default 5. */
      recoverAfterSuccesses: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 5),
    }),
    {},
  ),
  /** `gateway.destination.disabled` also when the circuit breaker stays open this long. Default 600. */
  breakerOpenSeconds: v.optional(seconds(86_400), 600),
  /** `gateway.deliveries.dead` collects a destination's dead letters for this long. Default 60. */
  deadBatchSeconds: v.optional(seconds(3600), 60),
  /** `gateway.ingress.verification_failures`: at least `threshold` failures of one source in the window. */
  verificationFailures: v.optional(
    v.strictObject({
      windowSeconds: v.optional(seconds(86_400), 300),
      threshold: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000)), 20),
    }),
    {},
  ),
});

export type OperationalEventsConfig = v.InferOutput<typeof OperationalEventsSchema>;
