/**
 * The delivery engine's spans (docs/tracing.md). One per attempt: a child of the context recorded
 * on the event, so every attempt of an event, however late and on whichever instance, joins the
 * trace of the webhook that brought it; named and described by the destination's kind (an HTTP
 * client span for `http`, a messaging producer span for `queue`, a client span for `email`).
 * One per routed event (which destinations it went to), and one per replay request, linked to
 * the event's trace.
 */

import type { EventRecord } from "../store/contract.ts";
import { eventSpanAttributes } from "../tracing/event-span-attributes.ts";
import type { SpanAttributes, SpanKind, TraceSpan, Tracing } from "../tracing/tracing-port.ts";
import type { DeliveryAttemptResult, DestinationShape } from "./sink-contract.ts";

/** The attempt spans of one destination. */
export interface AttemptTracer {
  /** Starts the span of attempt number `attempt` (1 for the first) of `record`. */
  start(record: EventRecord, attempt: number): TraceSpan;
  /** Records the attempt's outcome on its span and ends it (ERROR status when it failed). */
  end(span: TraceSpan, result: DeliveryAttemptResult): void;
}

interface SpanShape {
  name: string;
  kind: SpanKind;
  attributes: SpanAttributes;
}

/** The name, kind and fixed attributes of a destination's attempt spans. */
function shapeOf(destination: DestinationShape): SpanShape {
  const fields = destination as DestinationShape & { url?: string; stream?: string; binding?: string; driver?: string };
  const base = { "gateway.destination.id": destination.id, "gateway.destination.type": destination.type };
  if (destination.type === "http" && fields.url) {
    const url = new URL(fields.url);
    return {
      name: "POST",
      kind: "client",
      attributes: {
        ...base,
        "http.request.method": "POST",
        // Without the query string: it may carry a token of the receiver's.
        "url.full": `${url.origin}${url.pathname}`,
        "server.address": url.hostname,
        "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)),
      },
    };
  }
  if (destination.type === "queue") {
    const queue = fields.stream ?? fields.binding ?? destination.id;
    return {
      name: `send ${queue}`,
      kind: "producer",
      attributes: {
        ...base,
        "messaging.system": fields.driver === "cloudflare-queues" ? "cloudflare_queues" : "redis_streams",
        "messaging.destination.name": queue,
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
      },
    };
  }
  return { name: `send ${destination.type}`, kind: "client", attributes: base };
}

/** The attempt tracer of one destination. */
export function createAttemptTracer(tracing: Tracing, destination: DestinationShape): AttemptTracer {
  const shape = shapeOf(destination);
  // The transport's status: an HTTP status for `http`, an SMTP reply code for `email`.
  const statusAttribute = destination.type === "http" ? "http.response.status_code" : "gateway.delivery.status";
  return {
    start: (record, attempt) =>
      tracing.startSpan(shape.name, {
        kind: shape.kind,
        parent: record.event,
        attributes: {
          ...shape.attributes,
          ...eventSpanAttributes(record.sourceId, record.event),
          "messaging.message.id": shape.kind === "producer" ? record.id : undefined,
          "gateway.delivery.attempt": attempt,
        },
      }),
    end(span, result) {
      span.setAttributes({
        "gateway.delivery.outcome": result.ok ? "delivered" : result.permanent ? "failed_permanently" : "failed",
        [statusAttribute]: result.status,
        "gateway.delivery.error": result.ok ? undefined : result.error,
      });
      const failure = result.status ? String(result.status) : result.permanent ? "permanent" : "failed";
      span.end(result.ok ? undefined : failure);
    },
  };
}

/** Records the routing of `record` to `destinationIds` as a span in the event's trace. */
export function traceRouting(tracing: Tracing, record: EventRecord, destinationIds: string[]): void {
  tracing
    .startSpan("route event", {
      parent: record.event,
      attributes: { ...eventSpanAttributes(record.sourceId, record.event), "gateway.destination.ids": destinationIds },
    })
    .end();
}

/** Starts the span of a replay of `record`: a new trace linked to the event's own. */
export function startReplaySpan(tracing: Tracing, record: EventRecord): TraceSpan {
  return tracing.startSpan("replay event", {
    links: record.event.traceparent ? [record.event] : undefined,
    attributes: eventSpanAttributes(record.sourceId, record.event),
  });
}
