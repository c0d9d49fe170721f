/**
 * Fixed-window rate limits on the emulator's clock: the documented per-minute limits of both
 * references (e-sign token endpoint 10/min per IP and 30/min per client, 60/min per client for
 * the rest, 600/hour for uploads; staffing 60/min per key). Windows are bounded in number.
 */
import { createBoundedMap } from "./bounded-map.ts";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the window resets. */
  resetAt: number;
  /** Whole seconds until the reset (at least 1). */
  retryAfterSeconds: number;
}

export interface RateLimit {
  /** Counts one call for `key` and decides. */
  hit(key: string): RateDecision;
  /** The decision `hit` would give, without counting. */
  peek(key: string): RateDecision;
}

/** A limit of `limit` calls per `windowMs` per key. */
export function createRateLimit(limit: number, windowMs: number, now: () => number): RateLimit {
  const windows = createBoundedMap<string, { start: number; count: number }>(10_000);
  const windowOf = (key: string) => {
    const t = now();
    let window = windows.get(key);
    if (!window || t >= window.start + windowMs) {
      window = { start: t, count: 0 };
      windows.set(key, window);
    }
    return window;
  };
  const decide = (window: { start: number; count: number }, counted: number): RateDecision => {
    const resetAt = window.start + windowMs;
    return {
      allowed: counted <= limit,
      limit,
      remaining: Math.max(0, limit - window.count),
      resetAt,
      retryAfterSeconds: Math.max(1, Math.ceil((resetAt - now()) / 1000)),
    };
  };
  return {
    hit(key) {
      const window = windowOf(key);
      window.count++;
      return decide(window, window.count);
    },
    peek(key) {
      const window = windowOf(key);
      return decide(window, window.count);
    },
  };
}
