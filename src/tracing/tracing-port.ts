/**
 * The tracing contract: the few span operations the gateway's hook points use. Off by default
 * (`ctx.tracing` undefined: every hook point is one `undefined` check and allocates nothing); the
 * runtime adapters implement it over the OpenTelemetry SDK (adapters/tracing, docs/tracing.md).
 */

/** W3C Trace Context of one hop (and the CloudEvents distributed-tracing extension's attributes). */
export interface TraceHeaders {
  traceparent?: string;
  tracestate?: string;
}

/** OpenTelemetry span kinds. */
export type SpanKind = "server" | "client" | "producer" | "consumer" | "internal";

export type SpanAttributeValue = string | number | boolean | string[];

/** Span attributes; `undefined` values are left out. */
export type SpanAttributes = Record<string, SpanAttributeValue | undefined>;

export interface SpanStart {
  /** Default `internal`. */
  kind?: SpanKind;
  attributes?: SpanAttributes;
  /** The parent context (a request's headers, a recorded event); none starts a new trace. */
  parent?: TraceHeaders;
  /** Contexts this span relates to without being their child (a replay links to the original). */
  links?: readonly TraceHeaders[];
}

export interface TraceSpan {
  setAttributes(attributes: SpanAttributes): void;
  /** Starts a child of this span. */
  startChild(name: string, options?: Omit<SpanStart, "parent">): TraceSpan;
  /** The context that makes this span the parent of the next hop. */
  headers(): TraceHeaders;
  /** Ends the span; with `error` (a short code, never a secret) its status is ERROR. */
  end(error?: string): void;
}

export interface Tracing {
  startSpan(name: string, options?: SpanStart): TraceSpan;
  /** Exports what is buffered (Workers hand the promise to `waitUntil`). */
  flush(): Promise<void>;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}
