/**
 * staffing enrichment lookup: an event naming a staffing request (`staffingRequestId` in the
 * webhook body) is enriched with `GET /staffing-requests/{id}` (staffing seed, Staffing requests).
 */
import type { GatewayEvent } from "../events/envelope.ts";
import type { EnrichmentLookup } from "./enrichment-lookup.ts";

/** The staffing request id of a staffing event, when it names one. */
function staffingRequestIdOf(event: GatewayEvent): string | undefined {
  const id = (event.data as { staffingRequestId?: unknown } | null)?.staffingRequestId;
  return typeof id === "string" && id.length > 0 && id.length <= 200 ? id : undefined;
}

export const staffingEnrichment: EnrichmentLookup = {
  service: "staffing",
  pathOf(event) {
    const id = staffingRequestIdOf(event);
    return id === undefined ? undefined : `/staffing-requests/${encodeURIComponent(id)}`;
  },
};
