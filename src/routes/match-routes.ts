/**
 * Decides which destinations a recorded event goes to: the union of the destinations of every
 * route it matches. Compiled once per configuration.
 */
import type { RouteConfig } from "../config/routes-schema.ts";
import { type EnrichRule, resolveEnrichRule } from "../enrich/enrich-schema.ts";
import type { GatewayEvent } from "../events/envelope.ts";
import { destinationConcerned, GATEWAY_SOURCE_ID } from "../events/gateway-source.ts";
import { compileTypePattern } from "../store/match-event-query.ts";

type Scalar = string | number | boolean | null;

export interface CompiledRoute {
  id: string;
  destinations: readonly string[];
  /** Enrichment asked for by the route (src/enrich), if any. */
  enrich?: EnrichRule;
  matches(sourceId: string, event: GatewayEvent): boolean;
}

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

function compileWhere(where: Record<string, Scalar | Scalar[]> | undefined) {
  const entries = Object.entries(where ?? {});
  return (event: GatewayEvent) =>
    entries.every(([path, expected]) => {
      const actual = readPath(event, path);
      return Array.isArray(expected) ? expected.some((e) => e === actual) : expected === actual;
    });
}

/** Compiles the configured routes. */
export function compileRoutes(routes: readonly RouteConfig[]): CompiledRoute[] {
  return routes.map((route, index) => {
    const types = (route.types ?? ["*"]).map(compileTypePattern);
    const where = compileWhere(route.where);
    const sources = route.sources ? new Set(route.sources) : undefined;
    const services = route.services ? new Set<string>(route.services) : undefined;
    return {
      id: route.id ?? `route-${index}`,
      destinations: route.destinations,
      enrich: resolveEnrichRule(route.enrich),
      // The gateway's own events only reach routes that name their source.
      matches: (sourceId, event) =>
        (sources === undefined ? sourceId !== GATEWAY_SOURCE_ID : sources.has(sourceId)) &&
        (services === undefined || services.has(event.service)) &&
        types.some((matches) => matches(event.type)) &&
        where(event),
    };
  });
}

/** The destination ids a recorded event goes to (deduplicated, in route order). */
export function resolveDestinations(routes: readonly CompiledRoute[], sourceId: string, event: GatewayEvent): string[] {
  const out = new Set<string>();
  for (const route of routes) {
    if (route.matches(sourceId, event)) for (const destination of route.destinations) out.add(destination);
  }
  // An operational event about a destination does not go to that destination (no alert loops).
  const concerned = destinationConcerned(sourceId, event.data);
  if (concerned !== undefined) out.delete(concerned);
  return [...out];
}
