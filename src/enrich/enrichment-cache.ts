/**
 * The enrichment cache: one entry per upstream resource (so per event subject), reused for the
 * route's TTL, with single flight (events of one agreement arriving together cause one fetch).
 * A failure is remembered briefly so a down upstream is not asked once per event; the size is
 * bounded, oldest entries going first.
 */
import type { EnrichmentResult } from "./fetch-enrichment.ts";

/** How long a failed fetch is remembered at most, ms. */
const FAILURE_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export interface CachedEnrichment {
  result: EnrichmentResult;
  /** When the resource was fetched, epoch ms. */
  fetchedAt: number;
}

interface Entry {
  expiresAt: number;
  value: Promise<CachedEnrichment>;
}

export type EnrichmentCache = ReturnType<typeof createEnrichmentCache>;

/** Creates an empty cache on the clock `now`. */
export function createEnrichmentCache(now: () => number) {
  const entries = new Map<string, Entry>();

  const evictOverflow = () => {
    for (const key of entries.keys()) {
      if (entries.size <= MAX_ENTRIES) return;
      entries.delete(key);
    }
  };

  return {
    /** The cached result for `key`, or the result of `load` (cached for `ttlMs`, failures shorter). */
    get(key: string, ttlMs: number, load: () => Promise<EnrichmentResult>): Promise<CachedEnrichment> {
      const at = now();
      const entry = entries.get(key);
      if (entry && entry.expiresAt > at) return entry.value;
      const value = load().then((result) => ({ result, fetchedAt: now() }));
      // In flight the entry is shared (single flight); once settled it lives for its TTL.
      const inflight: Entry = { expiresAt: Number.POSITIVE_INFINITY, value };
      entries.set(key, inflight);
      evictOverflow();
      value.then(({ result }) => {
        if (entries.get(key) !== inflight) return;
        const ttl = result.ok ? ttlMs : Math.min(ttlMs, FAILURE_TTL_MS);
        if (ttl <= 0) entries.delete(key);
        else entries.set(key, { expiresAt: now() + ttl, value });
      });
      return value;
    },
    /** Forgets every cached result (after an erasure: cached resources may describe erased events). */
    clear() {
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
