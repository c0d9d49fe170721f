/**
 * The tracing port (src/tracing/tracing-port.ts) over the OpenTelemetry JS SDK: a tracer
 * provider with the configured resource and sampler, a batch span processor (`OTEL_BSP_*`) and
 * the OTLP/HTTP exporter. Parents and links are passed explicitly as W3C contexts, so nothing
 * depends on a context manager (Workers have none) and no global is registered.
 */
import { type Context, type Link, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import type {
  SpanKind as PortSpanKind,
  SpanAttributes,
  SpanStart,
  TraceHeaders,
  TraceSpan,
  Tracing,
} from "../../src/tracing/tracing-port.ts";
import { createOtlpHttpExporter } from "./otlp-http-exporter.ts";
import type { OtelOptions } from "./read-otel-env.ts";

const KINDS: Record<PortSpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
};

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (carrier: TraceHeaders) => Object.keys(carrier),
  get: (carrier: TraceHeaders, key: string) =>
    key === "traceparent" || key === "tracestate" ? carrier[key] : undefined,
};

/** The context a W3C header pair describes (the root context when there is none or it is invalid). */
function contextOf(headers: TraceHeaders | undefined): Context {
  return headers?.traceparent ? propagator.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

/** Sets the defined attributes one by one (no intermediate copies: this runs per span). */
function setDefined(span: Span, attributes: SpanAttributes | undefined): void {
  if (!attributes) return;
  for (const name in attributes) {
    const value = attributes[name];
    if (value !== undefined) span.setAttribute(name, value);
  }
}

/** One span of the port; its context object is built only when a child or a header needs it. */
class OtelSpan implements TraceSpan {
  private context: Context | undefined;

  constructor(
    private readonly span: Span,
    private readonly start: (context: Context, name: string, options?: Omit<SpanStart, "parent">) => Span,
  ) {}

  setAttributes(attributes: SpanAttributes): void {
    if (this.span.isRecording()) setDefined(this.span, attributes);
  }

  startChild(name: string, options?: Omit<SpanStart, "parent">): TraceSpan {
    this.context ??= trace.setSpan(ROOT_CONTEXT, this.span);
    return new OtelSpan(this.start(this.context, name, options), this.start);
  }

  headers(): TraceHeaders {
    // The W3C format written directly: the ids are already valid hex from the SDK.
    const { traceId, spanId, traceFlags, traceState } = this.span.spanContext();
    const flags = (traceFlags & 0xff).toString(16).padStart(2, "0");
    const headers: TraceHeaders = { traceparent: `00-${traceId}-${spanId}-${flags}` };
    const state = traceState?.serialize();
    if (state) headers.tracestate = state;
    return headers;
  }

  end(error?: string): void {
    if (error !== undefined && this.span.isRecording()) {
      this.span.setAttribute("error.type", error);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    }
    this.span.end();
  }
}

function samplerOf(options: OtelOptions): Sampler {
  const ratio = new TraceIdRatioBasedSampler(options.samplerRatio);
  switch (options.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio;
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

export interface OtelTracingDeps {
  /** Default: the OTLP/HTTP exporter of `options` (tests may inject another). */
  exporter?: SpanExporter;
  /** For the exporter's requests. Default: the runtime's `fetch`. */
  fetch?: typeof fetch;
  /** Told about failed exports. */
  onExportError?(message: string): void;
}

/** Creates the tracing of a gateway process or isolate. */
export function createOtelTracing(options: OtelOptions, deps: OtelTracingDeps = {}): Tracing {
  const exporter =
    deps.exporter ??
    createOtlpHttpExporter({
      url: options.url,
      protocol: options.protocol,
      headers: options.headers,
      timeoutMs: options.timeoutMs,
      fetch: deps.fetch,
      onError: deps.onExportError,
    });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...options.resourceAttributes, "service.name": options.serviceName }),
    sampler: samplerOf(options),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...options.batch })],
  });
  const tracer = provider.getTracer("svc-gateway");

  const startIn = (context: Context, name: string, start: Omit<SpanStart, "parent"> = {}): Span => {
    let links: Link[] | undefined;
    for (const link of start.links ?? []) {
      const linked = trace.getSpanContext(contextOf(link));
      if (!linked) continue;
      links ??= [];
      links.push({ context: linked });
    }
    const span = tracer.startSpan(name, { kind: KINDS[start.kind ?? "internal"], links }, context);
    // Attributes are set after the start (the samplers here do not read them), and only when recorded.
    if (span.isRecording()) setDefined(span, start.attributes);
    return span;
  };

  return {
    startSpan: (name, start = {}) => new OtelSpan(startIn(contextOf(start.parent), name, start), startIn),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
