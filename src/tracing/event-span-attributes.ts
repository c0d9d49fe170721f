/**
 * The attributes every span about one event carries: the CloudEvents semantic conventions
 * (`cloudevents.event_*`) plus the gateway's own (`gateway.*`), so a trace backend can find every
 * span of an event by its gateway id, upstream identity, source, type or subject.
 */
import type { GatewayEvent } from "../events/envelope.ts";
import type { SpanAttributes, TraceSpan } from "./tracing-port.ts";

/** What the attributes name of an event (a recorded one, or one a listener received). */
export type EventFacts = Pick<GatewayEvent, "id" | "type"> &
  Partial<Pick<GatewayEvent, "source" | "subject" | "upstreamid">>;

/** The attributes of a span about `event`. */
export function eventSpanAttributes(sourceId: string, event: EventFacts): SpanAttributes {
  return {
    "cloudevents.event_id": event.id,
    "cloudevents.event_source": event.source,
    "cloudevents.event_type": event.type,
    "cloudevents.event_subject": event.subject,
    "gateway.event.id": event.id,
    "gateway.source.id": sourceId,
    "gateway.upstream_event.id": event.upstreamid,
  };
}

/** Adds the event's attributes to `span`. */
export function describeEventSpan(span: TraceSpan, sourceId: string, event: EventFacts): void {
  span.setAttributes(eventSpanAttributes(sourceId, event));
}
