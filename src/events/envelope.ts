/**
 * The CloudEvents 1.0 structured-JSON envelope every recorded event is normalized into
 * (PRODUCT.md, "Event envelope"). Extension attribute names follow the CloudEvents naming rule
 * (lower-case letters and digits only).
 */

import type { Enrichment } from "../enrich/create-enricher.ts";

export type ServiceType = "esign" | "staffing";

export interface GatewayEvent {
  specversion: "1.0";
  /** Gateway event id, deterministic from (source id, upstream identity). */
  id: string;
  /** URI reference of the source, e.g. `/webhooks/esign`. */
  source: string;
  /** Upstream event name, e.g. `agreement.completed`, `candidate.accepted`. */
  type: string;
  /** `agreements/{agreement_id}` or `staffing-requests/{staffingRequestId}` when known. */
  subject?: string;
  /** When the upstream says the event happened, else the receive time (RFC 3339). */
  time: string;
  datacontenttype: "application/json";
  /** The upstream body as received (parsed JSON). */
  data: unknown;
  /** Extension: the service type of the source. */
  service: ServiceType;
  /** Extension: the upstream identity used for dedupe. */
  upstreamid: string;
  /** Extension: how the identity was obtained: `event_id`, `delivery-id` or `body-sha256`. */
  upstreamidkind: "event_id" | "delivery-id" | "body-sha256";
  /** Extension: when the gateway received the webhook (RFC 3339). */
  receivedtime: string;
  /** Extension on delivered events of routes with `enrich` (src/enrich/create-enricher.ts); never recorded. */
  enrichment?: Enrichment;
  /** Extension: why enrichment was not attached (`timeout`, `status_404`, `not_configured`, ...). */
  enrichmenterror?: string;
}
