/**
 * The request `gateway listen` POSTs to the local app for one event, rebuilt (and re-signed at
 * the attempt's time) for every attempt:
 * - `cloudevents`: the CloudEvent JSON signed per Standard Webhooks with the local `whsec_`
 *   secret, exactly as an `http` destination is (src/delivery/http/sign-standard-webhook.ts);
 * - `upstream`: the upstream's original body and headers (from the event log when the
 *   credential may read it, else the CloudEvent's `data` re-serialized and the identity headers
 *   rebuilt) re-signed in the service's own scheme (its `signDelivery`, src/services/registry.ts).
 */
import type { CryptoPort } from "../crypto/crypto-port.ts";
import { relayableHeaders } from "../delivery/http/build-webhook-request.ts";
import { signStandardWebhook } from "../delivery/http/sign-standard-webhook.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { ListenedEvent } from "./listen-frames.ts";

export type ListenFormat = "cloudevents" | "upstream";

/** The upstream delivery as the gateway recorded it (`GET /events/{id}`). */
export interface RecordedDelivery {
  body: Uint8Array;
  /** Received headers, lower-case names, signature headers redacted. */
  headers: Record<string, string>;
}

export interface ForwardRequest {
  headers: Record<string, string>;
  body: Uint8Array;
}

export const LISTEN_USER_AGENT = "svc-gateway-listen/0.1";

const encoder = new TextEncoder();

/** The identity headers an upstream sends, rebuilt from the CloudEvent when the original is unknown. */
/** The delivery id the re-signed request carries: the upstream's own when it identified the event by one. */
function deliveryIdOf(event: ListenedEvent): string {
  return event.upstreamidkind === "delivery-id" && event.upstreamid ? event.upstreamid : event.id;
}

/** Builds the request of one attempt for `event` at `nowMs`; `services` sign the `upstream` format. */
export async function buildForwardRequest(
  format: ListenFormat,
  event: ListenedEvent,
  secret: string,
  nowMs: number,
  crypto: CryptoPort,
  services: ServiceRegistry,
  recorded?: RecordedDelivery,
): Promise<ForwardRequest> {
  if (format === "cloudevents") {
    const body = encoder.encode(JSON.stringify(event));
    const timestamp = Math.floor(nowMs / 1000);
    return {
      body,
      headers: {
        "content-type": "application/cloudevents+json; charset=utf-8",
        "user-agent": LISTEN_USER_AGENT,
        "webhook-id": event.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": await signStandardWebhook([secret], event.id, timestamp, body),
      },
    };
  }
  const service = services.get(event.service);
  if (!service) throw new Error(`no upstream signature scheme known for service "${event.service}"`);
  const body = recorded?.body ?? encoder.encode(JSON.stringify(event.data));
  const headers: Record<string, string> = recorded
    ? relayableHeaders(recorded.headers)
    : { "content-type": "application/json" };
  headers["content-type"] ??= "application/json";
  return {
    body,
    headers: {
      ...headers,
      "user-agent": LISTEN_USER_AGENT,
      "x-gateway-event-id": event.id,
      ...(await service.signDelivery(secret, body, { nowMs, deliveryId: deliveryIdOf(event) }, crypto)),
    },
  };
}
