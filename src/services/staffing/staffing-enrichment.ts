/**
 * staffing enrichment (docs/fan-out-and-destinations.md, Enrichment): an event naming a staffing
 * request
 * (`staffingRequestId` in the webhook body) is enriched with `GET /staffing-requests/{id}`
 * (staffing seed, Staffing requests).
 */
import type { ServiceEnrichment, ServiceEvent } from "../service-contract.ts";

/** The staffing request id of a staffing event, when it names one. */
function staffingRequestIdOf(event: ServiceEvent): string | undefined {
  const id = (event.data as { staffingRequestId?: unknown } | null)?.staffingRequestId;
  return typeof id === "string" && id.length > 0 && id.length <= 200 ? id : undefined;
}

export const staffingEnrichment: ServiceEnrichment = {
  resourcePath(event) {
    const id = staffingRequestIdOf(event);
    return id === undefined ? undefined : `/staffing-requests/${encodeURIComponent(id)}`;
  },
};
