/** A token bucket (burst of one second's worth) that tells when the next token will be there. */

export interface RateLimiter {
  /** Takes a token if one is available now. */
  take(now: number): boolean;
  /** When the next token is available (epoch ms). */
  nextAt(now: number): number;
}

/** Creates a full bucket allowing `perSecond` attempts per second on average. */
export function createRateLimiter(perSecond: number): RateLimiter {
  const capacity = Math.max(1, perSecond);
  let tokens = capacity;
  let last: number | undefined;
  const refill = (now: number) => {
    if (last !== undefined && now > last) tokens = Math.min(capacity, tokens + ((now - last) * perSecond) / 1000);
    last = now;
  };
  return {
    take(now) {
      refill(now);
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    nextAt(now) {
      refill(now);
      return tokens >= 1 ? now : now + Math.ceil(((1 - tokens) * 1000) / perSecond);
    },
  };
}
