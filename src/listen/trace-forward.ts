/**
 * Tracing of `gateway listen` forwards (docs/tracing.md): one HTTP client span per forwarded
 * event (its retries included), a child of the context the event was recorded in, whose own
 * context goes to the local app as `traceparent`. Without tracing, the recorded context goes.
 */
import { eventSpanAttributes } from "../tracing/event-span-attributes.ts";
import { isTraceparent, toTraceHeaders } from "../tracing/trace-context.ts";
import type { TraceHeaders, TraceSpan, Tracing } from "../tracing/tracing-port.ts";
import type { ListenedEvent } from "./listen-frames.ts";

/** The recorded context of a listened event, when it carries a valid one. */
export function recordedTraceOf(event: ListenedEvent): TraceHeaders | undefined {
  return isTraceparent(event.traceparent) ? toTraceHeaders(event.traceparent, event.tracestate) : undefined;
}

/** Starts the span of forwarding `event` to `target`. */
export function startForwardSpan(tracing: Tracing, event: ListenedEvent, target: string): TraceSpan {
  const url = new URL(target);
  const source = typeof event.source === "string" ? event.source : "";
  return tracing.startSpan("POST", {
    kind: "client",
    parent: recordedTraceOf(event),
    attributes: {
      ...eventSpanAttributes(source.replace(/^\/webhooks\//, ""), { ...event, source }),
      "http.request.method": "POST",
      "url.full": `${url.origin}${url.pathname}`,
      "server.address": url.hostname,
      "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)),
    },
  });
}
