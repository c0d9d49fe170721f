/**
 * The delivery log lines an operator alerts on (docs/operations-and-metrics.md "Alerting on
 * logs"): failed attempts and dead letters at `warn`, at most one line per destination and kind
 * per interval (the next line says how many were left out), and a destination whose circuit
 * breaker opens at `error`. Lines carry the destination id, the status and the transport's short
 * error; never the event's content, its headers or a secret. (A destination disabled by an HTTP
 * 410 is logged at `error` by its lane.)
 */
import type { Logger } from "../ops/logger.ts";
import type { LaneObservation, LaneObserver } from "./lane-observer.ts";

/** Default seconds between two `warn` lines of one destination and kind. */
export const DEFAULT_ATTEMPT_WARN_INTERVAL_SECONDS = 60;

interface Throttle {
  lastAt: number;
  suppressed: number;
}

const SSRF_REFUSED = "refused by the SSRF guard";

/** The gateway's own words for a transform past its limits (no user text in them). */
const TRANSFORM_LIMIT = /^transform_error: the transform (ran longer than \d+ ms|used more than \d+ MiB)$/;

/**
 * The error as a log line may carry it: a transform's own error message is user code's text and
 * may quote the event (an address it could not map), so only its code goes to the process log;
 * the message stays in the attempt record, which erasure reaches (docs/data-lifecycle.md).
 */
export function loggableError(error: string | undefined): string | undefined {
  if (error === undefined || !error.startsWith("transform_error") || TRANSFORM_LIMIT.test(error)) return error;
  return "transform_error (the transform's message is in the attempt record)";
}

/** Creates the observer; `now` in ms, `intervalMs` between two lines of one destination and kind. */
export function createDeliveryAlertLog(logger: Logger, now: () => number, intervalMs: number): LaneObserver {
  const throttles = new Map<string, Throttle>();
  const breakers = new Map<string, string>();

  /** True when a line may be written now; `suppressed` is how many were left out before it. */
  const admit = (key: string): { ok: boolean; suppressed: number } => {
    const at = now();
    const throttle = throttles.get(key);
    if (throttle && at - throttle.lastAt < intervalMs) {
      throttle.suppressed++;
      return { ok: false, suppressed: 0 };
    }
    const suppressed = throttle?.suppressed ?? 0;
    throttles.set(key, { lastAt: at, suppressed: 0 });
    return { ok: true, suppressed };
  };

  return (observation: LaneObservation) => {
    if (observation.kind !== "attempt") return;
    const { destination, status, outcome } = observation;
    const error = loggableError(observation.error);
    if (!observation.ok) {
      const line = admit(`attempt\n${destination}`);
      if (line.ok) {
        logger.warn("delivery attempt failed", {
          destination,
          ...(status === undefined ? {} : { status }),
          error,
          outcome,
          ...(line.suppressed > 0 ? { suppressed: line.suppressed } : {}),
          ...(error?.startsWith(SSRF_REFUSED)
            ? { hint: "set allowPrivateNetworks: true (or allowCidrs) on this destination if the address is meant" }
            : {}),
        });
      }
    }
    if (outcome === "dead") {
      const line = admit(`dead\n${destination}`);
      if (line.ok) {
        logger.warn("delivery dead-lettered", {
          destination,
          eventId: observation.eventId,
          ...(status === undefined ? {} : { status }),
          error,
          ...(line.suppressed > 0 ? { suppressed: line.suppressed } : {}),
        });
      }
    }
    const before = breakers.get(destination) ?? "closed";
    breakers.set(destination, observation.breaker);
    if (observation.breaker === "open" && before !== "open" && before !== "half-open") {
      logger.error("destination failing: circuit breaker open", {
        destination,
        ...(status === undefined ? {} : { status }),
        error,
      });
    } else if (observation.breaker === "closed" && before !== "closed") {
      logger.info("destination recovered: circuit breaker closed", { destination });
    }
  };
}

/** Calls every observer given (skipping undefined ones); undefined when there is none. */
export function combineLaneObservers(...observers: (LaneObserver | undefined)[]): LaneObserver | undefined {
  const present = observers.filter((o): o is LaneObserver => o !== undefined);
  if (present.length <= 1) return present[0];
  return (observation) => {
    for (const observer of present) observer(observation);
  };
}
