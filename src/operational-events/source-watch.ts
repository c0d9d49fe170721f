/**
 * Spikes of failed webhook verifications per source (a rotated secret, or an attack):
 * `gateway.ingress.verification_failures` once the failures in the window reach the threshold,
 * `gateway.ingress.verification_failures.recovered` once they fall below half of it (the gap
 * keeps a steady trickle near the threshold from flapping).
 */
import type { Condition, Emitted } from "./destination-watch.ts";
import type { OperationalEventsConfig } from "./operational-events-schema.ts";

const iso = (ms: number) => new Date(ms).toISOString();

export function createSourceWatch(source: string, config: OperationalEventsConfig) {
  const windowMs = config.verificationFailures.windowSeconds * 1000;
  // Failures are counted in buckets: at most ten per window, none longer than 10 s.
  const bucketMs = Math.min(10_000, windowMs / 10);
  const threshold = config.verificationFailures.threshold;
  const buckets: { start: number; n: number }[] = [];
  const reasons = new Map<string, number>();
  let activeSince: number | undefined;

  const inWindow = (now: number) => {
    let expired = 0;
    while (expired < buckets.length && (buckets[expired] as { start: number }).start <= now - windowMs) expired++;
    if (expired > 0) buckets.splice(0, expired);
    return buckets.reduce((sum, b) => sum + b.n, 0);
  };

  return {
    /** One failed verification (`code`: `invalid_signature`, `timestamp_out_of_tolerance`). */
    onFailure(code: string, at: number): Emitted[] {
      const start = at - (at % bucketMs);
      const last = buckets[buckets.length - 1];
      if (last?.start === start) last.n++;
      else buckets.push({ start, n: 1 });
      reasons.set(code, (reasons.get(code) ?? 0) + 1);
      const failures = inWindow(at);
      if (activeSince !== undefined || failures < threshold) return [];
      activeSince = at;
      const data = {
        source,
        failures,
        window_seconds: config.verificationFailures.windowSeconds,
        reasons: Object.fromEntries(reasons),
      };
      reasons.clear();
      return [{ type: "gateway.ingress.verification_failures", data }];
    },

    /** True while a spike is on (the caller re-checks it on a timer). */
    active: () => activeSince !== undefined,

    /** The recovery, once the window holds less than half the threshold. */
    check(at: number): Emitted[] {
      if (activeSince === undefined || inWindow(at) >= threshold / 2) return [];
      const since = activeSince;
      activeSince = undefined;
      reasons.clear();
      return [
        {
          type: "gateway.ingress.verification_failures.recovered",
          data: { source, since: iso(since), duration_seconds: Math.round((at - since) / 1000) },
        },
      ];
    },

    conditions(now: number): Condition[] {
      if (activeSince === undefined) return [];
      return [
        {
          type: "gateway.ingress.verification_failures",
          subject: `sources/${source}`,
          since: iso(activeSince),
          data: { source, failures: inWindow(now) },
        },
      ];
    },
  };
}

export type SourceWatch = ReturnType<typeof createSourceWatch>;
