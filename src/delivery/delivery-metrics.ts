/**
 * The delivery engine's metrics: attempts and final outcomes per destination, attempt latency,
 * backlog and breaker state. Labels carry destination ids and outcomes only.
 */
import type { Metrics } from "../ops/metrics.ts";

export const DELIVERY_METRICS = {
  gateway_delivery_attempts_total: {
    type: "counter",
    help: "Delivery attempts by destination and outcome (success, failure).",
  },
  gateway_deliveries_total: {
    type: "counter",
    help: "Deliveries that reached a final state, by destination and outcome (delivered, dead, skipped).",
  },
  gateway_delivery_attempt_seconds: { type: "histogram", help: "Duration of one delivery attempt." },
  gateway_delivery_backlog: {
    type: "gauge",
    help: "Deliveries not yet final (pending, delivering, retrying, paused), by destination.",
  },
  gateway_destination_breaker_open: {
    type: "gauge",
    help: "1 while the destination's circuit breaker is open or half-open, else 0.",
  },
} as const;

/** A gauge on top of the counter registry: sets by adding the difference to the last value. */
export function createGauge(metrics: Metrics, name: string, labels: Record<string, string>) {
  let last = 0;
  metrics.inc(name, labels, 0);
  return (value: number) => {
    if (value === last) return;
    metrics.inc(name, labels, value - last);
    last = value;
  };
}
