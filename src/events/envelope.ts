/**
 * The CloudEvents 1.0 structured-JSON envelope every recorded event is normalized into
 * (docs/ingress-and-verification.md#the-event-envelope). Extension attribute names follow the
 * CloudEvents naming rule
 * (lower-case letters and digits only).
 */

/** The name of a registered upstream service (src/services/registry.ts). */
export type ServiceType = string;

/** The `enrichment` extension of a delivered event (src/enrich/create-enricher.ts). */
export interface Enrichment {
  /** Upstream id the resource was fetched through. */
  upstream: string;
  /** Path under the upstream's API root, e.g. `/agreements/{id}`. */
  path: string;
  /** When it was fetched (RFC 3339); a cached copy keeps its fetch time. */
  fetchedtime: string;
  /** The upstream's answer as JSON (the agreement, the staffing request). */
  data: unknown;
}

export interface GatewayEvent {
  specversion: "1.0";
  /** Gateway event id, deterministic from (source id, upstream identity). */
  id: string;
  /** URI reference of the source, e.g. `/webhooks/esign`. */
  source: string;
  /** Upstream event name, e.g. `agreement.completed`. */
  type: string;
  /** What the event is about, as the source's service names it (e.g. `agreements/{id}`), when known. */
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
  /** Extension: how the identity was obtained, as the service says (`event_id`, `delivery-id`, `body-sha256`). */
  upstreamidkind: string;
  /** Extension: when the gateway received the webhook (RFC 3339). */
  receivedtime: string;
  /** Extension on delivered events of routes with `enrich` (src/enrich/create-enricher.ts); never recorded. */
  enrichment?: Enrichment;
  /** Extension: why enrichment was not attached (`timeout`, `status_404`, `not_configured`, ...). */
  enrichmenterror?: string;
  /** Distributed-tracing extension: the W3C context the event was recorded in (docs/tracing.md). */
  traceparent?: string;
  /** Distributed-tracing extension: the W3C `tracestate` that came with `traceparent`. */
  tracestate?: string;
}
