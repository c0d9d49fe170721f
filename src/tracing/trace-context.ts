/**
 * W3C Trace Context values as the gateway accepts them: a `traceparent` from a request or a
 * recorded event is used only when well formed (a malformed one starts a new trace, as the W3C
 * spec says), and the CloudEvents distributed-tracing extension keeps it on the event.
 */
import type { GatewayEvent } from "../events/envelope.ts";
import type { TraceHeaders } from "./tracing-port.ts";

// version-traceid-parentid-flags; version ff is invalid, later versions may append fields.
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-[\x21-\x7e]*)?$/;
// list-members of printable ASCII, at most 512 characters (W3C: 32 members of bounded size).
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/** True for a well-formed `traceparent`. */
export function isTraceparent(value: string | null | undefined): value is string {
  return typeof value === "string" && value.length <= 256 && TRACEPARENT.test(value);
}

/** The trace context a request carries, or undefined when it has no valid `traceparent`. */
export function readTraceHeaders(headers: Headers): TraceHeaders | undefined {
  const traceparent = headers.get("traceparent");
  if (!isTraceparent(traceparent)) return undefined;
  const tracestate = headers.get("tracestate");
  return tracestate && TRACESTATE.test(tracestate) ? { traceparent, tracestate } : { traceparent };
}

/** Keeps `context` on the event as the CloudEvents distributed-tracing extension attributes. */
export function attachTraceContext(event: GatewayEvent, context: TraceHeaders | undefined): void {
  if (!context?.traceparent) return;
  event.traceparent = context.traceparent;
  if (context.tracestate) event.tracestate = context.tracestate;
}

/** Adds `traceparent`/`tracestate` of `context` to a header record (no-op without one). */
export function setTraceHeaders(headers: Record<string, string>, context: TraceHeaders | undefined): void {
  if (!context?.traceparent) return;
  headers.traceparent = context.traceparent;
  if (context.tracestate) headers.tracestate = context.tracestate;
}
