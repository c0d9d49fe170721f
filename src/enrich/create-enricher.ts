/**
 * Enrichment (docs/fan-out-and-destinations.md, Enrichment): a route with `enrich` makes the
 * gateway fetch the event's
 * resource from the upstream right before delivery and attach it to the delivered CloudEvent as
 * the extension `enrichment` (`upstream`, `path`, `fetchedtime`, `data`). It is bounded in time,
 * cached per resource, and never holds an event back: on any failure the event goes out as
 * recorded plus `enrichmenterror` (a short code). The event log keeps the event unenriched.
 */
import type { Enrichment, GatewayEvent } from "../events/envelope.ts";
import type { Logger } from "../ops/logger.ts";
import type { ProxyUpstream } from "../proxy/proxy-deps.ts";
import type { UpstreamFetch } from "../proxy/upstream-fetch.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { EventRecord } from "../store/contract.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import type { EnrichRule } from "./enrich-schema.ts";
import { createEnrichmentCache } from "./enrichment-cache.ts";
import { fetchEnrichment } from "./fetch-enrichment.ts";

export type { Enrichment } from "../events/envelope.ts";

/** What the enricher reads of a compiled route (src/routes/match-routes.ts). */
export interface EnrichingRoute {
  destinations: readonly string[];
  enrich?: EnrichRule;
  matches(sourceId: string, event: GatewayEvent, headers?: Readonly<Record<string, string>>): boolean;
}

export interface EnricherDeps {
  routes: readonly EnrichingRoute[];
  /** Where each event's service says which resource describes it (`enrichment.resourcePath`). */
  services: ServiceRegistry;
  upstreams: ReadonlyMap<string, ProxyUpstream>;
  fetch: UpstreamFetch;
  now(): number;
  logger: Logger;
}

export interface Enricher {
  /** True when a route sending `record` to one of `destinationIds` asks for enrichment. */
  wants(record: EventRecord, destinationIds: readonly string[]): boolean;
  /**
   * The record to deliver to `destinationIds`: enriched, marked, or as it was. Never rejects.
   * A fetch it makes is traced as a child of `span` (the attempt's, when tracing is on).
   */
  enrich(record: EventRecord, destinationIds: readonly string[], span?: TraceSpan): Promise<EventRecord>;
  /** Drops every cached resource (after an erasure). */
  clear(): void;
}

/** Creates the enricher of a gateway (one cache for every destination). */
export function createEnricher(deps: EnricherDeps): Enricher {
  const cache = createEnrichmentCache(deps.now);
  const enriching = deps.routes.filter((route) => route.enrich !== undefined);

  const ruleOf = (record: EventRecord, destinationIds: readonly string[]): EnrichRule | undefined => {
    for (const route of enriching) {
      if (!route.destinations.some((id) => destinationIds.includes(id))) continue;
      if (route.matches(record.sourceId, record.event, record.headers)) return route.enrich;
    }
    return undefined;
  };

  const upstreamFor = (event: GatewayEvent, rule: EnrichRule): ProxyUpstream | undefined => {
    if (rule.upstream !== undefined) return deps.upstreams.get(rule.upstream);
    for (const upstream of deps.upstreams.values()) if (upstream.config.service === event.service) return upstream;
    return undefined;
  };

  const mark = (record: EventRecord, error: string): EventRecord => ({
    ...record,
    event: { ...record.event, enrichmenterror: error },
  });

  return {
    clear: () => cache.clear(),
    wants: (record, destinationIds) => enriching.length > 0 && ruleOf(record, destinationIds) !== undefined,
    async enrich(record, destinationIds, span) {
      if (enriching.length === 0) return record;
      const rule = ruleOf(record, destinationIds);
      if (!rule) return record;
      const path = deps.services.get(record.event.service)?.enrichment?.resourcePath(record.event);
      // An event that names no resource has nothing to be enriched with; that is not a failure.
      if (path === undefined) return record;
      // An id of ".", ".." or with a separator would fetch another resource (the list, the root).
      if (!isSafeResourcePath(path)) return mark(record, "invalid_id");
      const upstream = upstreamFor(record.event, rule);
      if (!upstream?.credentials || upstream.config.service !== record.event.service) {
        return mark(record, "not_configured");
      }
      const { config, credentials } = upstream;
      const { result, fetchedAt } = await cache.get(`${config.id}\n${path}`, rule.ttlMs, () =>
        fetchEnrichment(deps.fetch, config, credentials, path, rule.timeoutMs, span),
      );
      if (!result.ok) {
        deps.logger.warn("enrichment failed; delivering unenriched", {
          upstream: config.id,
          path,
          error: result.error,
        });
        return mark(record, result.error);
      }
      const enrichment: Enrichment = {
        upstream: config.id,
        path,
        fetchedtime: new Date(fetchedAt).toISOString(),
        data: result.resource,
      };
      return { ...record, event: { ...record.event, enrichment } };
    },
  };
}

const UNSAFE_SEGMENT = /[/\\\u0000-\u001f\u007f]/;

/** A segment percent-decoded until it stops changing (`%252e` is a dot to an upstream that decodes twice). */
function decodeFully(segment: string): string | undefined {
  let current = segment;
  for (let round = 0; round < 4 && current.includes("%"); round++) {
    try {
      const next = decodeURIComponent(current);
      if (next === current) break;
      current = next;
    } catch {
      return undefined;
    }
  }
  return current;
}

/**
 * Is `path` made of plain segments only: none empty, `.` or `..` (in any percent spelling), none
 * holding a separator, NUL or another control character once decoded?
 */
export function isSafeResourcePath(path: string): boolean {
  if (!path.startsWith("/")) return false;
  for (const segment of path.slice(1).split("/")) {
    const decoded = decodeFully(segment);
    if (decoded === undefined || decoded === "" || decoded === "." || decoded === "..") return false;
    if (UNSAFE_SEGMENT.test(decoded)) return false;
  }
  return true;
}
