/**
 * The CloudEvents 1.0 structured-JSON envelope every recorded event is normalized into
 * (README, "The event envelope"). Extension attribute names follow the CloudEvents naming rule
 * (lower-case letters and digits only).
 */

/** The name of a registered upstream service (src/services/registry.ts). */
export type ServiceType = string;

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
}
