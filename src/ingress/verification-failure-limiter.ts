/**
 * The per-address limiter of failed webhook verifications (README "Security"). An address whose
 * deliveries keep failing the signature check (more than `maxFailures` within `windowSeconds`) is
 * answered 429 with `Retry-After` for `blockSeconds`, before any more of its bodies are read:
 * verifying a large forged body costs CPU, refusing one costs next to nothing. Addresses in
 * `allowAddresses` are never limited; `maxFailures: 0` turns the limiter off. Memory is bounded:
 * at most `MAX_TRACKED` addresses, expired ones swept first, then the oldest.
 */
import type { FailedVerificationLimitConfig } from "../config/hardening-schema.ts";
import { normalizeAddress } from "../http/client-address.ts";

export type LimitDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface VerificationFailureLimiter {
  /** May `address` send another delivery now? */
  check(address: string | undefined): LimitDecision;
  /** Counts one failed verification from `address`. */
  recordFailure(address: string | undefined): void;
}

interface Entry {
  windowStart: number;
  failures: number;
  blockedUntil: number;
}

const MAX_TRACKED = 50_000;
const ALLOWED: LimitDecision = { ok: true };

/** Creates the limiter; `now` is epoch milliseconds. */
export function createVerificationFailureLimiter(
  config: FailedVerificationLimitConfig,
  now: () => number,
): VerificationFailureLimiter {
  const allowed = new Set(config.allowAddresses.map(normalizeAddress));
  const entries = new Map<string, Entry>();
  const windowMs = config.windowSeconds * 1000;
  const blockMs = config.blockSeconds * 1000;
  const exempt = (address: string | undefined): address is undefined =>
    config.maxFailures === 0 || address === undefined || allowed.has(normalizeAddress(address));

  const sweep = (at: number) => {
    for (const [key, entry] of entries) {
      if (entry.blockedUntil <= at && entry.windowStart + windowMs <= at) entries.delete(key);
    }
    // Still full (a spread flood): forget the oldest entries rather than grow.
    for (const key of entries.keys()) {
      if (entries.size < MAX_TRACKED) break;
      entries.delete(key);
    }
  };

  return {
    check(address) {
      if (exempt(address)) return ALLOWED;
      const entry = entries.get(normalizeAddress(address));
      const at = now();
      if (!entry || entry.blockedUntil <= at) return ALLOWED;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((entry.blockedUntil - at) / 1000)) };
    },
    recordFailure(address) {
      if (exempt(address)) return;
      const key = normalizeAddress(address);
      const at = now();
      let entry = entries.get(key);
      if (!entry || entry.windowStart + windowMs <= at) {
        if (!entry && entries.size >= MAX_TRACKED) sweep(at);
        entry = { windowStart: at, failures: 0, blockedUntil: entry?.blockedUntil ?? 0 };
        entries.set(key, entry);
      }
      entry.failures += 1;
      if (entry.failures > config.maxFailures) entry.blockedUntil = at + blockMs;
    },
  };
}
