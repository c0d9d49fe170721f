/**
 * The state machine of one destination's operational events: `failing` when enough attempts in
 * the window failed, `recovered` after consecutive successes (or when a disabled destination is
 * resumed, or its breaker closes), `disabled` on HTTP 410 or a breaker open for too long, and
 * dead letters collected into one `gateway.deliveries.dead` per batch. Each fires once per
 * change of state; the caller records them (create-operational-events.ts).
 */
import type { AttemptObservation, DestinationStateObservation } from "../delivery/lane-observer.ts";
import { ERASED_TEXT } from "../delivery/scrub-delivery.ts";
import type { OperationalEventsConfig } from "./operational-events-schema.ts";

/** An operational event to record: its type and data. */
export interface Emitted {
  type: string;
  data: Record<string, unknown>;
}

/** A condition that holds right now (the console's banner). */
export interface Condition {
  type: string;
  /** `destinations/<id>`, `sources/<id>`, `store`. */
  subject: string;
  since: string;
  data: Record<string, unknown>;
}

/** Event ids listed in one dead-letter batch. */
const DEAD_SAMPLE = 20;

interface Bucket {
  start: number;
  attempts: number;
  failures: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function createDestinationWatch(destination: string, config: OperationalEventsConfig) {
  const windowMs = config.failing.windowSeconds * 1000;
  // Attempts are counted in buckets: at most ten per window, none longer than 10 s.
  const bucketMs = Math.min(10_000, windowMs / 10);
  const breakerOpenMs = config.breakerOpenSeconds * 1000;
  let buckets: Bucket[] = [];
  let consecutiveSuccesses = 0;
  let lastError: string | undefined;
  /** The event whose attempt gave `lastError`. */
  let lastErrorEvent: string | undefined;
  let failingSince: number | undefined;
  let disabled: { since: number; reason: string; by: "gone" | "breaker" } | undefined;
  let openSince: number | undefined;
  let dead: { from: number; count: number; events: string[]; lastError?: string; lastEvent?: string } | undefined;

  const totals = (now: number) => {
    // Buckets are in time order: the expired ones are at the front (no new array per attempt).
    let expired = 0;
    while (expired < buckets.length && (buckets[expired] as Bucket).start <= now - windowMs) expired++;
    if (expired > 0) buckets.splice(0, expired);
    let attempts = 0;
    let failures = 0;
    for (const b of buckets) {
      attempts += b.attempts;
      failures += b.failures;
    }
    return { attempts, failures };
  };

  const count = (at: number, ok: boolean) => {
    const start = at - (at % bucketMs);
    let bucket = buckets[buckets.length - 1];
    if (!bucket || bucket.start !== start) {
      bucket = { start, attempts: 0, failures: 0 };
      buckets.push(bucket);
    }
    bucket.attempts++;
    if (!ok) bucket.failures++;
  };

  const recovered = (from: "failing" | "disabled", since: number, at: number): Emitted => ({
    type: "gateway.destination.recovered",
    data: { destination, from, since: iso(since), duration_seconds: Math.round((at - since) / 1000) },
  });

  const disable = (at: number, by: "gone" | "breaker", reason: string): Emitted[] => {
    if (disabled) return [];
    disabled = { since: at, reason, by };
    return [{ type: "gateway.destination.disabled", data: { destination, reason, since: iso(at) } }];
  };

  return {
    /** One attempt's outcome: the events it causes. */
    onAttempt(o: AttemptObservation): Emitted[] {
      const out: Emitted[] = [];
      count(o.at, o.ok);
      if (o.ok) consecutiveSuccesses++;
      else {
        consecutiveSuccesses = 0;
        lastError = o.error;
        lastErrorEvent = o.eventId;
      }
      const { attempts, failures } = totals(o.at);
      if (
        failingSince === undefined &&
        attempts >= config.failing.minAttempts &&
        failures / attempts >= config.failing.errorRate
      ) {
        failingSince = o.at;
        out.push({
          type: "gateway.destination.failing",
          data: {
            destination,
            attempts,
            failures,
            error_rate: Math.round((failures / attempts) * 1000) / 1000,
            window_seconds: config.failing.windowSeconds,
            last_error: lastError ?? null,
            last_event: lastErrorEvent ?? null,
          },
        });
      } else if (failingSince !== undefined && consecutiveSuccesses >= config.failing.recoverAfterSuccesses) {
        out.push(recovered("failing", failingSince, o.at));
        failingSince = undefined;
        // A fresh window: the failures before the recovery do not count again.
        buckets = [];
      }
      if (o.breaker === "open") {
        openSince ??= o.at;
        if (o.at - openSince >= breakerOpenMs) {
          out.push(...disable(o.at, "breaker", `the circuit breaker has been open since ${iso(openSince)}`));
        }
      } else if (o.breaker === "closed") {
        openSince = undefined;
        if (disabled?.by === "breaker") {
          out.push(recovered("disabled", disabled.since, o.at));
          disabled = undefined;
        }
      }
      if (o.outcome === "dead") {
        dead ??= { from: o.at, count: 0, events: [] };
        dead.count++;
        if (dead.events.length < DEAD_SAMPLE) dead.events.push(o.eventId);
        dead.lastError = o.error;
        dead.lastEvent = o.eventId;
      }
      return out;
    },

    /** A disable (410) or an operator's resume. */
    onState(o: DestinationStateObservation): Emitted[] {
      if (o.state === "disabled") return disable(o.at, "gone", o.reason ?? "disabled by the destination");
      if (!disabled) return [];
      const since = disabled.since;
      disabled = undefined;
      openSince = undefined;
      return [recovered("disabled", since, o.at)];
    },

    /** True when dead letters wait to be reported. */
    hasDead: () => dead !== undefined,

    /** The collected dead letters as one event (and forgets them), if any. */
    flushDead(at: number): Emitted | undefined {
      if (!dead) return undefined;
      const batch = dead;
      dead = undefined;
      return {
        type: "gateway.deliveries.dead",
        data: {
          destination,
          count: batch.count,
          from: iso(batch.from),
          to: iso(at),
          events: batch.events,
          last_error: batch.lastError ?? null,
          last_event: batch.lastEvent ?? null,
        },
      };
    },

    /** Forgets the last errors that belong to erased events (src/lifecycle/erase-events.ts). */
    forgetErased(erasedIds: ReadonlySet<string>, texts: ReadonlySet<string>) {
      const belongs = (error: string | undefined, event: string | undefined) =>
        error !== undefined && (texts.has(error) || (event !== undefined && erasedIds.has(event)));
      if (belongs(lastError, lastErrorEvent)) lastError = ERASED_TEXT;
      if (dead && belongs(dead.lastError, dead.lastEvent)) dead.lastError = ERASED_TEXT;
    },

    /** The conditions of this destination that hold now. */
    conditions(): Condition[] {
      const subject = `destinations/${destination}`;
      const out: Condition[] = [];
      if (failingSince !== undefined) {
        out.push({ type: "gateway.destination.failing", subject, since: iso(failingSince), data: { destination } });
      }
      if (disabled) {
        out.push({
          type: "gateway.destination.disabled",
          subject,
          since: iso(disabled.since),
          data: { destination, reason: disabled.reason },
        });
      }
      return out;
    },
  };
}

export type DestinationWatch = ReturnType<typeof createDestinationWatch>;
