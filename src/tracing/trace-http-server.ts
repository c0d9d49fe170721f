/**
 * The server span of an incoming request (OpenTelemetry HTTP semantic conventions): named
 * `{method} {route}`, the child of the caller's `traceparent` when it sent a valid one, with the
 * answer's status code; 5xx answers (and handler failures) mark it failed.
 */
import { clientAddressOf } from "../http/client-address.ts";
import { errorType } from "./error-type.ts";
import { readTraceHeaders } from "./trace-context.ts";
import type { SpanAttributes, TraceSpan, Tracing } from "./tracing-port.ts";

/** Runs `handle` inside a server span for `route` (e.g. `/webhooks/{sourceId}`); `url`: the request's, parsed. */
export async function traceHttpServer<T extends { status?: number }>(
  tracing: Tracing,
  route: string,
  request: Request,
  url: URL,
  attributes: SpanAttributes,
  handle: (span: TraceSpan) => Promise<T>,
): Promise<T> {
  const span = tracing.startSpan(`${request.method} ${route}`, {
    kind: "server",
    parent: readTraceHeaders(request.headers),
    attributes: {
      "http.request.method": request.method,
      "http.route": route,
      "url.path": url.pathname,
      "url.scheme": url.protocol.slice(0, -1),
      "client.address": clientAddressOf(request),
      ...attributes,
    },
  });
  try {
    const response = await handle(span);
    const status = response.status ?? 200;
    span.setAttributes({ "http.response.status_code": status });
    span.end(status >= 500 ? String(status) : undefined);
    return response;
  } catch (error) {
    // The gateway's HTTP errors carry the status they answer with.
    const status = (error as { status?: unknown }).status;
    if (typeof status === "number") span.setAttributes({ "http.response.status_code": status });
    span.end(typeof status === "number" ? (status >= 500 ? String(status) : undefined) : errorType(error));
    throw error;
  }
}
