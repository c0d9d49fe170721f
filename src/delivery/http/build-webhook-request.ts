/**
 * Builds the request of one attempt to an `http` destination: the CloudEvent JSON (or, in
 * `relay` mode, the upstream's raw body and headers minus hop-by-hop ones), signed per Standard
 * Webhooks at the attempt's time. Every attempt of one event carries the same `webhook-id`.
 */

import { decodeRawBody } from "../../encoding/raw-body-text.ts";
import { hopByHopFilter } from "../../http/hop-by-hop.ts";
import type { DeliverableRecord } from "../sink-contract.ts";
import type { HttpDestination } from "./http-destination-schema.ts";
import { type HmacSha256, signStandardWebhook } from "./sign-standard-webhook.ts";

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

const encoder = new TextEncoder();

export const USER_AGENT = "svc-gateway/0.1 (+standard-webhooks)";

/** Never forwarded in relay mode besides hop-by-hop headers: recomputed, or our own. */
const NOT_RELAYED = new Set([
  "host",
  "content-length",
  "expect",
  "user-agent",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
]);

/** The upstream headers as recorded, minus what must not travel on. */
export function relayableHeaders(received: Record<string, string>): Record<string, string> {
  const isHopByHop = hopByHopFilter(received.connection);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(received)) {
    // Signature and credential headers were redacted when recorded; a placeholder is no header.
    if (isHopByHop(name) || NOT_RELAYED.has(name) || value === "[redacted]") continue;
    out[name] = value;
  }
  return out;
}

/** The signed request for `record` at `nowMs`. */
export async function buildWebhookRequest(
  destination: Pick<HttpDestination, "url" | "mode" | "secrets" | "headers">,
  record: DeliverableRecord,
  nowMs: number,
  hmac?: HmacSha256,
): Promise<WebhookRequest> {
  const relay = destination.mode === "relay";
  // A transform's payload is sent (and signed) exactly as the transform serialised it.
  const { transformed } = record;
  const body = relay
    ? decodeRawBody(record.rawBody, record.rawBodyEncoding)
    : encoder.encode(transformed ? transformed.json : JSON.stringify(record.event));
  const contentType = transformed ? "application/json" : "application/cloudevents+json; charset=utf-8";
  const timestamp = Math.floor(nowMs / 1000);
  const headers: Record<string, string> = {
    ...(relay ? relayableHeaders(record.headers) : { "content-type": contentType }),
    ...destination.headers,
    "user-agent": USER_AGENT,
    "webhook-id": record.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await signStandardWebhook(destination.secrets, record.id, timestamp, body, hmac),
  };
  if (relay && !headers["content-type"]) headers["content-type"] = "application/json";
  return { url: destination.url, headers, body };
}
