/**
 * Per-stage delivery timings, for latency investigations only (off by default; on Node,
 * `GATEWAY_DELIVERY_TRACE=<file>` turns it on: adapters/node/delivery-trace-env.ts). Each stage
 * notes how long after the event's `receivedAt` the event reached it; every `windowMs` the
 * percentiles of the window are handed to the reporter, and the window starts over. Off, a mark
 * is one boolean test.
 *
 * Stages, in order: `offered` (the hub handed the recorded event to the router), `routing` (its
 * batch's outbox write began), `created` (that write committed), `laned` (its record reached the
 * lane), `attempt` (the lane started the attempt).
 */

export const DELIVERY_STAGES = ["offered", "routing", "created", "laned", "attempt"] as const;
export type DeliveryStage = (typeof DELIVERY_STAGES)[number];

/** One window's figures: per stage, sample count and p50/p95/p99/max in ms after `receivedAt`. */
export type StageWindow = Record<string, { n: number; p50: number; p95: number; p99: number; max: number }>;

let samples: Map<DeliveryStage, number[]> | undefined;
let now: () => number = () => Date.now();

/** Notes that an event received at `receivedAt` (ms, the gateway clock) reached `stage`. */
export function markStage(stage: DeliveryStage, receivedAt: number): void {
  if (samples === undefined) return;
  samples.get(stage)?.push(now() - receivedAt);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

/** Summarises and clears the current window. */
export function takeStageWindow(): StageWindow {
  const out: StageWindow = {};
  if (samples === undefined) return out;
  for (const stage of DELIVERY_STAGES) {
    const list = (samples.get(stage) ?? []).sort((a, b) => a - b);
    samples.set(stage, []);
    if (list.length === 0) continue;
    out[stage] = {
      n: list.length,
      p50: percentile(list, 50),
      p95: percentile(list, 95),
      p99: percentile(list, 99),
      max: list[list.length - 1] as number,
    };
  }
  return out;
}

/**
 * Turns the trace on: `clock` is the one `receivedAt` comes from. Returns the function that
 * turns it off again.
 */
export function enableStageTrace(clock: () => number): () => void {
  now = clock;
  samples = new Map(DELIVERY_STAGES.map((stage) => [stage, []]));
  return () => {
    samples = undefined;
  };
}
