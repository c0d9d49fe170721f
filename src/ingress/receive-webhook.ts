/**
 * `POST /webhooks/{sourceId}`: read the raw bytes, verify, normalize, claim the identity, record
 * durably, and only then acknowledge. The order is the durability contract:
 *   1. nothing touches the store before the signature is verified;
 *   2. the identity is claimed atomically (a short "in progress" claim that expires), so that
 *      concurrent copies produce one event and a crash between claim and record never turns
 *      the upstream's retry into a dropped duplicate;
 *   3. the 202 goes out only after `store.append` resolved (durable);
 *   4. any failure after verification answers 5xx so the upstream retries.
 */
import type { SourceConfig } from "../config/schema.ts";
import { encodeRawBody } from "../encoding/raw-body-text.ts";
import { createGatewayError } from "../errors.ts";
import { normalizeEvent } from "../events/normalize-event.ts";
import { redactHeaders } from "../ops/logger.ts";
import { type EventRecord, toDedupeKey } from "../store/contract.ts";
import { describeEventSpan } from "../tracing/event-span-attributes.ts";
import { attachTraceContext, readTraceHeaders } from "../tracing/trace-context.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import type { BodyLease } from "./body-budget.ts";
import type { IngressDeps } from "./ingress-deps.ts";
import { guardBeforeBody } from "./ingress-guards.ts";
import { verifyWebhook } from "./verify-webhook.ts";
import type { WebhookAnswer, WebhookInput } from "./webhook-exchange.ts";

const STORE_RETRY_AFTER_SECONDS = "5";
/** Bodies in flight finish within milliseconds to a body deadline: a short wait is enough. */
const OVERLOADED_RETRY_AFTER_SECONDS = "1";

// A plain answer the runtime renders (webhook-exchange.ts): no Response object on the hot path.
function json(status: number, body: unknown, requestId: string): WebhookAnswer {
  return {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId },
    body: JSON.stringify(body),
  };
}

/** Longest part of an unknown source id a log line repeats. */
const LOGGED_SOURCE_ID_LENGTH = 64;

/**
 * A source id as asked for, fit for a log line: at most 64 characters (then `…`), anything
 * outside printable ASCII shown as `?`.
 */
export function boundedSourceId(id: string): string {
  const printable = id.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > LOGGED_SOURCE_ID_LENGTH ? `${printable.slice(0, LOGGED_SOURCE_ID_LENGTH)}…` : printable;
}

/**
 * Handles one webhook delivery; returns the answer or throws the gateway's HTTP error. `span` is
 * the request's server span when tracing is on (src/tracing/trace-http-server.ts).
 */
export async function receiveWebhook(
  ctx: IngressDeps,
  sourceId: string,
  request: WebhookInput,
  requestId: string,
  span?: TraceSpan,
): Promise<WebhookAnswer> {
  // The body's bytes count against the process's budget until the answer is made: the copies
  // made while verifying, normalizing and recording it live that long (body-budget.ts).
  const lease = ctx.bodyBudget?.lease();
  try {
    return await receiveLeased(ctx, sourceId, request, requestId, span, lease);
  } finally {
    lease?.release();
  }
}

async function receiveLeased(
  ctx: IngressDeps,
  sourceId: string,
  request: WebhookInput,
  requestId: string,
  span: TraceSpan | undefined,
  lease: BodyLease | undefined,
): Promise<WebhookAnswer> {
  const { metrics, logger, store } = ctx;
  const source = ctx.sources.get(sourceId);
  if (!source)
    throw refuse(
      ctx,
      source,
      sourceId,
      requestId,
      404,
      "unknown_source",
      "no webhook source with this id",
      "unknown_source",
    );

  // Before any byte of the body is read: refuse headers that can never verify (ingress-guards.ts).
  const guard = await guardBeforeBody(ctx, source, request.headers, request.clientAddress);
  const refused = guard.refused;
  if (refused)
    throw refuse(
      ctx,
      source,
      sourceId,
      requestId,
      refused.status,
      refused.code,
      refused.message,
      refused.reason,
      refused.extra,
    );

  // An address that keeps failing verification reads its bodies a few at a time (never refused:
  // behind a load balancer it is every sender's address; verification-failure-limiter.ts).
  const slot = ctx.verificationLimiter?.admit(request.clientAddress);
  const release = slot ? await slot : undefined;
  let body: Awaited<ReturnType<WebhookInput["readBody"]>>;
  let verified!: Awaited<ReturnType<typeof verifyWebhook>>;
  let started = 0;
  let receivedAt = 0;
  try {
    body = await request.readBody(source.bodyLimitBytes, source.bodyTimeoutMs, lease);
    started = performance.now();
    receivedAt = ctx.clock.now();
    if (body.ok) {
      const verifySpan = span?.startChild("verify webhook");
      verified = await verifyWebhook(
        source,
        request.headers,
        body.bytes,
        receivedAt,
        ctx.crypto,
        ctx.services,
        guard.signatureForm,
      );
      verifySpan?.end(verified.ok ? undefined : verified.reason);
    }
  } finally {
    release?.();
  }
  if (!body.ok && body.reason === "timeout") {
    throw refuse(
      ctx,
      source,
      sourceId,
      requestId,
      408,
      "request_timeout",
      `the body did not arrive within ${source.bodyTimeoutMs} ms`,
      "body_timeout",
      {
        headers: { connection: "close" },
      },
    );
  }
  if (!body.ok && body.reason === "over_budget") {
    throw refuse(
      ctx,
      source,
      sourceId,
      requestId,
      503,
      "overloaded",
      "the gateway is holding as many webhook bodies as it may at once; retry later",
      "over_budget",
      {
        // As after a 413: the rest of the body stays unread, the connection closes after the answer.
        headers: { "retry-after": OVERLOADED_RETRY_AFTER_SECONDS, connection: "close" },
      },
    );
  }
  if (!body.ok) {
    throw refuse(
      ctx,
      source,
      sourceId,
      requestId,
      413,
      "payload_too_large",
      `the body is larger than ${source.bodyLimitBytes} bytes`,
      "payload_too_large",
      {
        details: { limit: source.bodyLimitBytes },
        // The rest of the body stays unread: close the connection after this answer rather than
        // keep a socket with a half-read request open until the keep-alive timeout.
        headers: { connection: "close" },
      },
    );
  }
  if (!verified.ok) {
    if (verified.reason !== "timestamp_out_of_tolerance") ctx.verificationLimiter?.recordFailure(request.clientAddress);
    if (verified.reason === "timestamp_out_of_tolerance") {
      throw refuse(
        ctx,
        source,
        sourceId,
        requestId,
        401,
        "timestamp_out_of_tolerance",
        `the signature timestamp is more than ${source.toleranceSeconds} s from now`,
        verified.reason,
        {
          details: { toleranceSeconds: source.toleranceSeconds },
        },
      );
    }
    throw refuse(
      ctx,
      source,
      sourceId,
      requestId,
      401,
      "invalid_signature",
      "the webhook signature is missing, malformed or does not match",
      verified.reason,
      {
        details: { reason: verified.reason },
      },
    );
  }

  // Verified: from here on the body may be parsed.
  const stored = encodeRawBody(body.bytes);
  const text = stored.encoding === "utf8" ? stored.text : undefined;
  const normalized = await normalizeEvent(
    { source, rawBody: body.bytes, text, headers: request.headers, receivedAt, services: ctx.services },
    ctx.crypto,
  );
  if (!normalized.ok)
    throw refuse(ctx, source, sourceId, requestId, 400, "invalid_body", normalized.message, "invalid_body");
  const { event, identity, marks } = normalized;
  // The event keeps the context it was recorded in (CloudEvents distributed tracing): the server
  // span when tracing is on, else the caller's own, so later attempts join the caller's trace.
  attachTraceContext(event, span ? span.headers() : readTraceHeaders(request.headers));
  if (span) describeEventSpan(span, source.id, event);
  const dedupeKey = toDedupeKey(source.id, identity);
  const recordSpan = span?.startChild("record event");

  let claim: Awaited<ReturnType<typeof store.claim>>;
  try {
    claim = await store.claim(dedupeKey, ctx.config.claimTtlSeconds * 1000);
  } catch (cause) {
    recordSpan?.end("store_unavailable");
    throw storeUnavailable(ctx, requestId, sourceId, cause);
  }
  if (claim.status !== "claimed") recordSpan?.end();
  if (claim.status === "duplicate") {
    metrics.inc("gateway_webhooks_duplicate_total", { source: source.id });
    logger.info("webhook duplicate", { requestId, source: source.id, id: claim.id });
    return json(200, { id: claim.id, duplicate: true }, requestId);
  }
  if (claim.status === "in_progress") {
    metrics.inc("gateway_webhooks_in_progress_total", { source: source.id });
    throw createGatewayError(409, "in_progress", "this event is being recorded by another request", {
      headers: { "retry-after": "1", "x-request-id": requestId },
    });
  }

  const record: EventRecord = {
    id: event.id,
    seq: 0,
    sourceId: source.id,
    identity,
    receivedAt,
    event,
    rawBody: stored.text,
    rawBodyEncoding: stored.encoding,
    headers: redactHeaders(request.listHeaders()),
    marks,
  };
  let inserted: boolean;
  let seq: number;
  try {
    ({ inserted, seq } = await store.append(record, dedupeKey, source.dedupeWindowSeconds * 1000));
  } catch (cause) {
    await store.release(dedupeKey).catch(() => {});
    recordSpan?.end("store_unavailable");
    ctx.writeHealth?.failed("journal", ctx.clock.now());
    throw storeUnavailable(ctx, requestId, sourceId, cause);
  }
  ctx.writeHealth?.succeeded("journal");
  recordSpan?.end();
  if (!inserted) {
    metrics.inc("gateway_webhooks_duplicate_total", { source: source.id });
    return json(200, { id: event.id, duplicate: true }, requestId);
  }
  // Unknown types are labelled "unknown" so a sender cannot grow the label set without bound.
  const typeLabel = marks.includes("unknown_type") ? "unknown" : event.type;
  metrics.inc("gateway_webhooks_accepted_total", { source: source.id, type: typeLabel });
  metrics.observe("gateway_webhook_verify_record_seconds", performance.now() - started, { source: source.id });
  // The stores keep their own copies, so the local record can carry its seq to the subscribers.
  record.seq = seq;
  ctx.hub.publish(record);
  logger.info("webhook accepted", { requestId, source: source.id, id: event.id, type: event.type, marks });
  return json(202, { id: event.id, duplicate: false }, requestId);
}

/**
 * Counts, logs and builds the refusal of a delivery (a module function rather than a closure in
 * receiveWebhook: no function object per request). An unknown source is named as asked for
 * (bounded, printable), so a typo in an upstream's webhook URL shows in the log.
 */
function refuse(
  ctx: IngressDeps,
  source: SourceConfig | undefined,
  sourceId: string,
  requestId: string,
  status: number,
  code: Parameters<typeof createGatewayError>[1],
  message: string,
  reason: string,
  extra?: { details?: unknown; headers?: Record<string, string> },
) {
  ctx.metrics.inc("gateway_webhooks_rejected_total", { source: source ? sourceId : "unknown", reason });
  ctx.logger.info("webhook rejected", {
    requestId,
    source: source ? sourceId : undefined,
    ...(source ? {} : { requested_source: boundedSourceId(sourceId) }),
    reason,
  });
  if (source) ctx.onWebhookRejected?.(sourceId, code);
  return createGatewayError(status, code, message, {
    details: extra?.details,
    headers: { "x-request-id": requestId, ...extra?.headers },
  });
}

function storeUnavailable(ctx: IngressDeps, requestId: string, sourceId: string, cause: unknown) {
  ctx.metrics.inc("gateway_webhooks_rejected_total", { source: sourceId, reason: "store_unavailable" });
  ctx.logger.error("store could not record the webhook", {
    requestId,
    source: sourceId,
    error: cause instanceof Error ? cause.message : String(cause),
  });
  return createGatewayError(503, "store_unavailable", "the event store cannot record right now; retry later", {
    headers: { "retry-after": STORE_RETRY_AFTER_SECONDS, "x-request-id": requestId },
  });
}
