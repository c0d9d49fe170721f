/**
 * The service-specific part of enrichment: which upstream resource describes an event. One small
 * lookup per service (esign-enrichment.ts, staffing-enrichment.ts); everything else (credentials,
 * time bound, cache, marking) is shared.
 */
import type { GatewayEvent, ServiceType } from "../events/envelope.ts";
import { esignEnrichment } from "./esign-enrichment.ts";
import { staffingEnrichment } from "./staffing-enrichment.ts";

export interface EnrichmentLookup {
  service: ServiceType;
  /** The path under the upstream's API root to GET, or undefined when the event names no resource. */
  pathOf(event: GatewayEvent): string | undefined;
}

const LOOKUPS: ReadonlyMap<string, EnrichmentLookup> = new Map([
  [esignEnrichment.service, esignEnrichment],
  [staffingEnrichment.service, staffingEnrichment],
]);

/** The lookup of a service, if it has one. */
export function enrichmentLookupOf(service: string): EnrichmentLookup | undefined {
  return LOOKUPS.get(service);
}
