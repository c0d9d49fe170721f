/**
 * The gateway's body budget (body-budget.ts) with its gauge and its warning: the bytes in flight
 * as `gateway_webhook_body_bytes_in_flight`, and one `warn` line a minute at most while bodies
 * are refused for it, so an operator sees the gateway shedding load without a line per request.
 */
import type { Clock } from "../ops/clock.ts";
import type { Logger } from "../ops/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import { type BodyBudget, createBodyBudget } from "./body-budget.ts";

/** Shortest time between two warnings about refused bodies, ms. */
export const BUDGET_WARNING_INTERVAL_MS = 60_000;

export function createIngressBodyBudget(deps: {
  max: () => number;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
}): BodyBudget {
  const { max, metrics, logger, clock } = deps;
  metrics.inc("gateway_webhook_body_bytes_in_flight", {}, 0);
  let warnedAt: number | undefined;
  let refusedSinceWarning = 0;
  return createBodyBudget({
    max,
    onChange: (delta) => metrics.inc("gateway_webhook_body_bytes_in_flight", {}, delta),
    onRefused: (inFlight, limit) => {
      refusedSinceWarning++;
      const now = clock.now();
      if (warnedAt !== undefined && now - warnedAt < BUDGET_WARNING_INTERVAL_MS) return;
      logger.warn(
        "webhook bodies in flight reached ingress.maxBodyBytesInFlight; refusing with 503 until some finish",
        {
          inFlightBytes: inFlight,
          maxBodyBytesInFlight: limit,
          refused: refusedSinceWarning,
        },
      );
      warnedAt = now;
      refusedSinceWarning = 0;
    },
  });
}
