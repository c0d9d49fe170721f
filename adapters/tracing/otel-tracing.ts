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
const headerSetter = {
  set: (carrier: TraceHeaders, key: string, value: string) => {
    if (key === "traceparent" || key === "tracestate") carrier[key] = value;
  },
};

/** The context a W3C header pair describes (the root context when there is none or it is invalid). */
function contextOf(headers: TraceHeaders | undefined): Context {
  return headers?.traceparent ? propagator.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
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

function clean(attributes: SpanAttributes | undefined): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  if (attributes) for (const [name, value] of Object.entries(attributes)) if (value !== undefined) out[name] = value;
  return out;
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

  const wrap = (span: Span): TraceSpan => {
    const parent = trace.setSpan(ROOT_CONTEXT, span);
    return {
      setAttributes: (attributes) => {
        span.setAttributes(clean(attributes));
      },
      startChild: (name, start) => wrap(startIn(parent, name, start)),
      headers() {
        const carrier: TraceHeaders = {};
        propagator.inject(parent, carrier, headerSetter);
        return carrier;
      },
      end(error) {
        if (error !== undefined) {
          span.setAttribute("error.type", error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        }
        span.end();
      },
    };
  };

  const startIn = (context: Context, name: string, start: Omit<SpanStart, "parent"> = {}): Span => {
    const links: Link[] = [];
    for (const link of start.links ?? []) {
      const linked = trace.getSpanContext(contextOf(link));
      if (linked) links.push({ context: linked });
    }
    return tracer.startSpan(
      name,
      { kind: KINDS[start.kind ?? "internal"], attributes: clean(start.attributes), links },
      context,
    );
  };

  return {
    startSpan: (name, start = {}) => wrap(startIn(contextOf(start.parent), name, start)),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
