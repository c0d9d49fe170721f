/**
 * Builds the request of one attempt to an `http` destination: the CloudEvent JSON (or, in
 * `relay` mode, the upstream's raw body and headers minus hop-by-hop ones), signed per Standard
 * Webhooks at the attempt's time. Every attempt of one event carries the same `webhook-id`.
 */

import { decodeRawBody } from "../../encoding/raw-body-text.ts";
import { hopByHopFilter } from "../../http/hop-by-hop.ts";
import { setTraceHeaders } from "../../tracing/trace-context.ts";
import type { TraceHeaders } from "../../tracing/tracing-port.ts";
import type { DeliverableRecord } from "../sink-contract.ts";
import type { HttpDestination } from "./http-destination-schema.ts";
import { type HmacSha256Base64, signStandardWebhook } from "./sign-standard-webhook.ts";

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
  // The attempt's own context replaces the upstream's.
  "traceparent",
  "tracestate",
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

/** A destination's headers that are the same on every attempt (not relayed), by body kind. */
const fixed = new WeakMap<object, { cloudEvent?: Record<string, string>; transformed?: Record<string, string> }>();

/**
 * The content type, the destination's own headers and the user agent, built once per destination
 * (a destination object is never changed: a configuration reload makes new ones). Copied by the caller.
 */
function fixedHeaders(destination: Pick<HttpDestination, "headers">, transformed: boolean): Record<string, string> {
  let entry = fixed.get(destination);
  if (!entry) {
    entry = {};
    fixed.set(destination, entry);
  }
  const kind = transformed ? "transformed" : "cloudEvent";
  let headers = entry[kind];
  if (!headers) {
    const contentType = transformed ? "application/json" : "application/cloudevents+json; charset=utf-8";
    headers = { "content-type": contentType, ...destination.headers, "user-agent": USER_AGENT };
    entry[kind] = headers;
  }
  return headers;
}

/**
 * The signed request for `record` at `nowMs`, carrying `trace` as W3C Trace Context headers:
 * built synchronously when the HMAC is (Node), else a promise of it (Web Crypto).
 */
export function buildWebhookRequest(
  destination: Pick<HttpDestination, "url" | "mode" | "secrets" | "headers">,
  record: DeliverableRecord,
  nowMs: number,
  hmac?: HmacSha256Base64,
  trace?: TraceHeaders,
): WebhookRequest | Promise<WebhookRequest> {
  const relay = destination.mode === "relay";
  // A transform's payload is sent (and signed) exactly as the transform serialised it.
  const { transformed } = record;
  const body = relay
    ? decodeRawBody(record.rawBody, record.rawBodyEncoding)
    : encoder.encode(transformed ? transformed.json : JSON.stringify(record.event));
  const timestamp = Math.floor(nowMs / 1000);
  const signature = signStandardWebhook(destination.secrets, record.id, timestamp, body, hmac);
  const headers: Record<string, string> = relay
    ? { ...relayableHeaders(record.headers), ...destination.headers, "user-agent": USER_AGENT }
    : { ...fixedHeaders(destination, transformed !== undefined) };
  headers["webhook-id"] = record.id;
  headers["webhook-timestamp"] = String(timestamp);
  // Set below, once signed; named here so the headers keep their order either way.
  headers["webhook-signature"] = "";
  if (relay && !headers["content-type"]) headers["content-type"] = "application/json";
  setTraceHeaders(headers, trace);
  const request = { url: destination.url, headers, body };
  if (typeof signature === "string") {
    headers["webhook-signature"] = signature;
    return request;
  }
  return signature.then((value) => {
    headers["webhook-signature"] = value;
    return request;
  });
}
