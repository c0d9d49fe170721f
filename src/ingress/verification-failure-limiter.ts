/**
 * The per-address budget of failed webhook verifications (docs/behind-a-load-balancer.md). An
 * address whose deliveries keep failing the signature check (more than `maxFailures` within
 * `windowSeconds`) is put on a budget for `blockSeconds`: at most `concurrentReads` of its bodies
 * are read and verified at a time, the others wait their turn. Nothing is refused: behind a load
 * balancer every sender shares one address, so refusing the address would refuse the genuine
 * upstream with the forger. What a flood from one address can cost is bounded instead: memory to
 * `concurrentReads` bodies, CPU to verifying them one slot at a time. Addresses in
 * `allowAddresses` are never budgeted; `maxFailures: 0` turns the budget off. At most
 * `MAX_TRACKED` addresses are remembered, expired ones swept first, then the oldest idle ones.
 */
import type { FailedVerificationLimitConfig } from "../config/hardening-schema.ts";
import { normalizeAddress } from "../http/client-address.ts";

/** Gives the read slot back; idempotent. */
export type ReleaseReadSlot = () => void;

export interface VerificationFailureLimiter {
  /**
   * Undefined when `address` may read at once (not on a budget: the common case, no allocation),
   * else a promise of a read slot that resolves once one of the address's slots is free.
   */
  admit(address: string | undefined): Promise<ReleaseReadSlot> | undefined;
  /** Counts one failed verification from `address`. */
  recordFailure(address: string | undefined): void;
}

interface Entry {
  windowStart: number;
  failures: number;
  budgetUntil: number;
  reading: number;
  waiting: (() => void)[];
}

const MAX_TRACKED = 50_000;

/** Creates the limiter; `now` is epoch milliseconds; `onWait` hears of each delivery that has to wait. */
export function createVerificationFailureLimiter(
  config: FailedVerificationLimitConfig,
  now: () => number,
  onWait: () => void = () => {},
): VerificationFailureLimiter {
  const allowed = new Set(config.allowAddresses.map(normalizeAddress));
  const entries = new Map<string, Entry>();
  const windowMs = config.windowSeconds * 1000;
  const budgetMs = config.blockSeconds * 1000;
  const exempt = (address: string | undefined): address is undefined =>
    config.maxFailures === 0 || address === undefined || allowed.has(normalizeAddress(address));
  const busy = (entry: Entry) => entry.reading > 0 || entry.waiting.length > 0;

  const sweep = (at: number) => {
    for (const [key, entry] of entries) {
      if (entry.budgetUntil <= at && entry.windowStart + windowMs <= at && !busy(entry)) entries.delete(key);
    }
    // Still full (a spread flood): forget the oldest idle entries rather than grow.
    for (const [key, entry] of entries) {
      if (entries.size < MAX_TRACKED) break;
      if (!busy(entry)) entries.delete(key);
    }
  };

  const grant = (entry: Entry, resolve: (release: ReleaseReadSlot) => void) => {
    entry.reading += 1;
    let released = false;
    resolve(() => {
      if (released) return;
      released = true;
      entry.reading -= 1;
      entry.waiting.shift()?.();
    });
  };

  return {
    admit(address) {
      if (exempt(address)) return undefined;
      const entry = entries.get(normalizeAddress(address));
      if (!entry || (entry.budgetUntil <= now() && !busy(entry))) return undefined;
      return new Promise<ReleaseReadSlot>((resolve) => {
        if (entry.reading < config.concurrentReads) grant(entry, resolve);
        else {
          onWait();
          entry.waiting.push(() => grant(entry, resolve));
        }
      });
    },
    recordFailure(address) {
      if (exempt(address)) return;
      const key = normalizeAddress(address);
      const at = now();
      let entry = entries.get(key);
      if (!entry) {
        if (entries.size >= MAX_TRACKED) sweep(at);
        entry = { windowStart: at, failures: 0, budgetUntil: 0, reading: 0, waiting: [] };
        entries.set(key, entry);
      } else if (entry.windowStart + windowMs <= at) {
        entry.windowStart = at;
        entry.failures = 0;
      }
      entry.failures += 1;
      if (entry.failures > config.maxFailures) entry.budgetUntil = at + budgetMs;
    },
  };
}
