/**
 * The `enrich` option of a route (docs/fan-out-and-destinations.md, Enrichment): before delivery,
 * the gateway fetches
 * the event's resource (the agreement, the staffing request) through the configured upstream
 * and attaches it to the delivered event. `true` takes every default; an object tunes them.
 */
import * as v from "valibot";

const upstreamId = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an upstream id"));

export const EnrichOptionSchema = v.union([
  v.boolean(),
  v.strictObject({
    /** Upstream id to fetch through. Default: the first configured upstream of the event's service. */
    upstream: v.optional(upstreamId),
    /** How long a fetched resource is reused for events of the same subject, seconds. Default 30. */
    ttlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(86_400)), 30),
    /** Longest wait for the upstream before the event goes out unenriched, ms. Default 2000. */
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(50), v.maxValue(30_000)), 2_000),
  }),
]);

export type EnrichOption = v.InferOutput<typeof EnrichOptionSchema>;

/** The resolved rule of a route that asks for enrichment. */
export interface EnrichRule {
  upstream?: string;
  ttlMs: number;
  timeoutMs: number;
}

/** Resolves a route's `enrich` option; undefined when the route does not ask for it. */
export function resolveEnrichRule(option: EnrichOption | undefined): EnrichRule | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { ttlMs: 30_000, timeoutMs: 2_000 };
  return { upstream: option.upstream, ttlMs: option.ttlSeconds * 1000, timeoutMs: option.timeoutMs };
}
