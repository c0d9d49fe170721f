/**
 * Routes and destinations: which recorded events go where. A route matches on source ids,
 * service types, event-type patterns and content filters (docs/filters.md), and names
 * destinations by id.
 * An event that matches no route is still recorded and visible in the log.
 */
import * as v from "valibot";
import { EnrichOptionSchema } from "../enrich/enrich-schema.ts";
import { DialectFiltersSchema, FilterSchema } from "../filters/filter-schema.ts";
import { builtinServices } from "../services/registry.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";

const id = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or -"));
const pattern = v.pipe(v.string(), v.minLength(1), v.maxLength(200));
const scalar = v.union([v.string(), v.number(), v.boolean(), v.null()]);

/** A route's schema, its `services` names of the registry. */
export function createRouteSchema(services: ServiceRegistry) {
  return v.strictObject({
    /** Name for logs and the admin API. Default `route-<index>`. */
    id: v.optional(id),
    /** Source ids; default all. */
    sources: v.optional(v.array(id)),
    /** Service names (src/services/registry.ts); default all. */
    services: v.optional(v.array(v.picklist([...services.keys()]))),
    /** Event-type patterns (`agreement.*`, `candidate.*`, `*`). Default `*`. */
    types: v.optional(v.array(pattern), ["*"]),
    /**
     * Shorthand filter by dot path (`data.status`, `data.result.requiresReview`): the value must
     * equal the given scalar, or be one of the given list (`$eq` / `$in` of the filter language).
     */
    where: v.optional(
      v.record(
        v.pipe(v.string(), v.regex(/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/, "a dot path such as data.status")),
        v.union([scalar, v.array(scalar)]),
      ),
    ),
    /** A filter on the CloudEvent and its headers (docs/filters.md); all of `where`, `filter`, `filters` apply. */
    filter: v.optional(FilterSchema),
    /** CloudEvents Subscriptions dialect expressions (`exact`, `prefix`, `suffix`, `all`, `any`, `not`); all must match. */
    filters: v.optional(DialectFiltersSchema),
    /** Destination ids. */
    destinations: v.pipe(v.array(id), v.minLength(1)),
    /** Attach the upstream resource before delivery: `true` or `{ upstream, ttlSeconds, timeoutMs }` (src/enrich). */
    enrich: v.optional(EnrichOptionSchema),
  });
}

export const RouteSchema = createRouteSchema(builtinServices);

/** The live stream (WebSocket/SSE subscribers); see src/stream. */
export const StreamDestinationSchema = v.strictObject({
  id,
  type: v.literal("stream"),
});

export type RouteConfig = v.InferOutput<typeof RouteSchema>;
