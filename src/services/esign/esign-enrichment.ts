/**
 * e-sign enrichment (docs/fan-out-and-destinations.md, Enrichment): an event naming an agreement
 * (`agreement_id` in the
 * webhook body, docs/ingress-and-verification.md#the-event-envelope) is enriched with `GET
 * /agreements/{id}` (esign
 * seed, Agreements).
 */
import type { ServiceEnrichment, ServiceEvent } from "../service-contract.ts";

/** The agreement id of an e-sign event, when it names one. */
function agreementIdOf(event: ServiceEvent): string | undefined {
  const data = event.data as { agreement_id?: unknown; data?: { agreement_id?: unknown } } | null;
  const id = data?.agreement_id ?? data?.data?.agreement_id;
  return typeof id === "string" && id.length > 0 && id.length <= 200 ? id : undefined;
}

export const esignEnrichment: ServiceEnrichment = {
  resourcePath(event) {
    const id = agreementIdOf(event);
    return id === undefined ? undefined : `/agreements/${encodeURIComponent(id)}`;
  },
};
