/**
 * A circuit breaker per destination: after `failures` consecutive failed attempts it opens and
 * the engine stops attempting; after the cooldown one probe goes through (half-open). A success
 * closes it; a failed probe opens it again for twice as long (up to 10 minutes).
 */

export type BreakerState = "closed" | "open" | "half-open";

export interface CircuitBreaker {
  readonly state: BreakerState;
  readonly consecutiveFailures: number;
  /** When the next probe may go, while open. */
  readonly probeAt: number | undefined;
  /** True when an attempt may start now (does not claim the probe). */
  canAttempt(now: number): boolean;
  /** Records that an attempt starts; in half-open this claims the single probe. */
  onAttempt(now: number): void;
  onSuccess(): void;
  onFailure(now: number): void;
  reset(): void;
}

const MAX_COOLDOWN_MS = 10 * 60 * 1000;

/** Creates a closed breaker. */
export function createCircuitBreaker(options: { failures: number; cooldownMs: number }): CircuitBreaker {
  let state: BreakerState = "closed";
  let consecutiveFailures = 0;
  let cooldownMs = options.cooldownMs;
  let probeAt: number | undefined;
  let probing = false;

  const open = (now: number) => {
    state = "open";
    probeAt = now + cooldownMs;
    probing = false;
  };

  return {
    get state() {
      return state;
    },
    get consecutiveFailures() {
      return consecutiveFailures;
    },
    get probeAt() {
      return state === "closed" ? undefined : probeAt;
    },
    canAttempt(now) {
      if (state === "closed") return true;
      if (state === "open") return now >= (probeAt ?? 0);
      return !probing;
    },
    onAttempt(now) {
      if (state === "open" && now >= (probeAt ?? 0)) state = "half-open";
      if (state === "half-open") probing = true;
    },
    onSuccess() {
      state = "closed";
      consecutiveFailures = 0;
      cooldownMs = options.cooldownMs;
      probeAt = undefined;
      probing = false;
    },
    onFailure(now) {
      consecutiveFailures++;
      if (state === "half-open") {
        cooldownMs = Math.min(cooldownMs * 2, Math.max(MAX_COOLDOWN_MS, options.cooldownMs));
        open(now);
      } else if (state === "closed" && consecutiveFailures >= options.failures) {
        open(now);
      }
    },
    reset() {
      state = "closed";
      consecutiveFailures = 0;
      cooldownMs = options.cooldownMs;
      probeAt = undefined;
      probing = false;
    },
  };
}
