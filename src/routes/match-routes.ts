/**
 * Decides which destinations a recorded event goes to: the union of the destinations of every
 * route it matches. Compiled once per configuration; `where`, `filter` and `filters` compile to
 * one predicate of the filter language (src/filters).
 */
import type { RouteConfig } from "../config/routes-schema.ts";
import { type EnrichRule, resolveEnrichRule } from "../enrich/enrich-schema.ts";
import type { GatewayEvent } from "../events/envelope.ts";
import { destinationConcerned, GATEWAY_SOURCE_ID } from "../events/gateway-source.ts";
import { parseEventFilter } from "../filters/event-filter.ts";
import { whereToFilter } from "../filters/parse-filter.ts";
import { compileTypePattern } from "../store/match-event-query.ts";

export interface CompiledRoute {
  id: string;
  destinations: readonly string[];
  /** Enrichment asked for by the route (src/enrich), if any. */
  enrich?: EnrichRule;
  /** `headers`: the received headers as recorded (lower-case names, credentials redacted). */
  matches(sourceId: string, event: GatewayEvent, headers?: Readonly<Record<string, string>>): boolean;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Reads a dot path (`data.result.requiresReview`) from an event. */
export function readPath(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split(".")) {
    // Own properties only: a filter on `constructor` or `__proto__` must not reach the prototype.
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The content predicate of a route (`where`, `filter`, `filters`), or undefined when it has none. */
function compileContentFilter(route: RouteConfig, index: number) {
  const parsed = parseEventFilter(route, route.where && whereToFilter(route.where));
  // The config schema validated these; a failure here is a bug, not a user error.
  if (!parsed.ok) throw new Error(`routes.${index}: invalid filter ${JSON.stringify(parsed.problems)}`);
  return parsed.filter?.matches;
}

/** Compiles the configured routes. */
export function compileRoutes(routes: readonly RouteConfig[]): CompiledRoute[] {
  return routes.map((route, index) => {
    const types = (route.types ?? ["*"]).map(compileTypePattern);
    const content = compileContentFilter(route, index);
    const sources = route.sources ? new Set(route.sources) : undefined;
    const services = route.services ? new Set<string>(route.services) : undefined;
    return {
      id: route.id ?? `route-${index}`,
      destinations: route.destinations,
      enrich: resolveEnrichRule(route.enrich),
      // The gateway's own events only reach routes that name their source.
      matches: (sourceId, event, headers = NO_HEADERS) =>
        (sources === undefined ? sourceId !== GATEWAY_SOURCE_ID : sources.has(sourceId)) &&
        (services === undefined || services.has(event.service)) &&
        types.some((matches) => matches(event.type)) &&
        (content === undefined || content({ event, headers })),
    };
  });
}

/** The destination ids a recorded event goes to (deduplicated, in route order). */
export function resolveDestinations(
  routes: readonly CompiledRoute[],
  sourceId: string,
  event: GatewayEvent,
  headers?: Readonly<Record<string, string>>,
): string[] {
  const out = new Set<string>();
  for (const route of routes) {
    if (route.matches(sourceId, event, headers)) for (const destination of route.destinations) out.add(destination);
  }
  // An operational event about a destination does not go to that destination (no alert loops).
  const concerned = destinationConcerned(sourceId, event.data);
  if (concerned !== undefined) out.delete(concerned);
  return [...out];
}
