/**
 * The `http` sink: one attempt builds the signed request and sends it through an HTTP transport
 * (the Node one connects through the SSRF guard; see adapters/sink/http-transport.ts),
 * then classifies the answer. Never throws: every failure becomes a result.
 */
import { createSink, type DeliveryAttemptResult, type Sink, type SinkFactory } from "../sink-contract.ts";
import { buildWebhookRequest, type WebhookRequest } from "./build-webhook-request.ts";
import { classifyHttpResponse } from "./classify-http-response.ts";
import type { HttpDestination } from "./http-destination-schema.ts";
import type { HmacSha256Base64 } from "./sign-standard-webhook.ts";

export type HttpSendResult =
  | { ok: true; status: number; retryAfter?: string }
  /** `refused`: the SSRF guard refused every address; `timeout`; `network`; `aborted`. */
  | { ok: false; failure: "refused" | "timeout" | "network" | "aborted"; detail: string };

export interface HttpTransport {
  /** Sends one request; never follows redirects; never rejects. */
  send(request: WebhookRequest, options: { signal: AbortSignal; timeoutMs: number }): Promise<HttpSendResult>;
  close(): Promise<void>;
}

export interface HttpSinkDeps {
  transport: HttpTransport;
  /** Signature timestamps. Default the system clock. */
  now?: () => number;
  /** HMAC-SHA256 for the signatures, in base64. Default Web Crypto. */
  hmac?: HmacSha256Base64;
}

/** Maps a transport outcome to the delivery result the engine acts on. */
export function toHttpAttemptResult(outcome: HttpSendResult, nowMs: number): DeliveryAttemptResult {
  if (outcome.ok) return classifyHttpResponse(outcome.status, outcome.retryAfter, nowMs);
  switch (outcome.failure) {
    case "refused":
      // The destination resolves to an address the configuration does not allow: retrying
      // cannot change that, and trying again and again would only probe the network.
      return { ok: false, permanent: true, error: `refused by the SSRF guard (${outcome.detail})` };
    case "timeout":
      return { ok: false, error: `timed out (${outcome.detail})` };
    case "aborted":
      return { ok: false, error: "attempt aborted" };
    case "network":
      return { ok: false, error: `network error (${outcome.detail})` };
  }
}

/** Creates the sink of one `http` destination. */
export const createHttpSink: SinkFactory<HttpDestination, HttpSinkDeps> = (destination, deps): Sink => {
  const now = deps.now ?? Date.now;
  const timeoutMs = destination.timeoutSeconds * 1000;
  // Made once per sink, not per attempt.
  const classify = (outcome: HttpSendResult) => toHttpAttemptResult(outcome, now());
  const send = (request: WebhookRequest, signal: AbortSignal) =>
    deps.transport.send(request, { signal, timeoutMs }).then(classify);
  return createSink(
    destination.id,
    "http",
    (record, signal, info) => {
      // Signed without a promise when the HMAC is synchronous (Node).
      const request = buildWebhookRequest(destination, record, now(), deps.hmac, info?.trace);
      return request instanceof Promise ? request.then((built) => send(built, signal)) : send(request, signal);
    },
    () => deps.transport.close(),
  );
};
