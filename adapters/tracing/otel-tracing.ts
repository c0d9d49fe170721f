/**
 * The tracing port (src/tracing/tracing-port.ts) over the OpenTelemetry JS SDK: the configured
 * resource and sampler, the SDK's batch span processor (`OTEL_BSP_*`) and the OTLP/HTTP exporter.
 * Spans are recorded by ./recorded-span.ts (the SDK's span values without its per-span
 * machinery) and sampled by the SDK's samplers. Parents and links are passed explicitly as W3C
 * contexts, so nothing depends on a context manager (Workers have none) and no global is registered.
 */
import {
  type Context,
  type Link,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  SamplingDecision,
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
import { createOtlpHttpExporter, type OtlpPost } from "./otlp-http-exporter.ts";
import type { OtelOptions } from "./read-otel-env.ts";
import { RecordedSpan, type SpanSink } from "./recorded-span.ts";

const KINDS: Record<PortSpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
};

const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[];
const NO_ATTRIBUTES = Object.freeze({});
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
function setDefined(span: RecordedSpan, attributes: SpanAttributes | undefined): void {
  if (!attributes) return;
  for (const name in attributes) {
    const value = attributes[name];
    if (value !== undefined) span.setAttribute(name, value);
  }
}

type StartIn = (parent: Context, name: string, options?: Omit<SpanStart, "parent">) => OtelSpan;

/**
 * One span of the port: `recorded` unless the sampler dropped it (then only its context travels,
 * as the SDK's non-recording span does); its context object is built only when a child needs it.
 */
class OtelSpan implements TraceSpan {
  private context: Context | undefined;

  constructor(
    private readonly spanContext: SpanContext,
    private readonly recorded: RecordedSpan | undefined,
    private readonly start: StartIn,
  ) {}

  setAttributes(attributes: SpanAttributes): void {
    if (this.recorded && !this.recorded.ended) setDefined(this.recorded, attributes);
  }

  startChild(name: string, options?: Omit<SpanStart, "parent">): TraceSpan {
    this.context ??= trace.setSpanContext(ROOT_CONTEXT, this.spanContext);
    return this.start(this.context, name, options);
  }

  headers(): TraceHeaders {
    // The W3C format written directly: the ids are already valid hex.
    const { traceId, spanId, traceFlags, traceState } = this.spanContext;
    const flags = (traceFlags & 0xff).toString(16).padStart(2, "0");
    const headers: TraceHeaders = { traceparent: `00-${traceId}-${spanId}-${flags}` };
    const state = traceState?.serialize();
    if (state) headers.tracestate = state;
    return headers;
  }

  end(error?: string): void {
    const span = this.recorded;
    if (!span) return;
    if (error !== undefined && !span.ended) {
      span.setAttribute("error.type", error);
      span.setError(error);
    }
    span.end();
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
  fetch?: OtlpPost;
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
  const processor = new BatchSpanProcessor({ exporter, ...options.batch });
  // The provider holds the processor for the SDK's flush and shutdown (timeouts, errors).
  const provider = new TracerProvider({ spanProcessors: [processor] });
  const sampler = samplerOf(options);
  const ids = new RandomIdGenerator();
  const sink: SpanSink = {
    resource: resourceFromAttributes({ ...options.resourceAttributes, "service.name": options.serviceName }),
    instrumentationScope: { name: "svc-gateway", version: undefined, schemaUrl: undefined },
    onEnd: (span) => processor.onEnd(span),
  };

  // What the SDK's Tracer.startSpan decides: a valid parent's trace (else a new one), the
  // sampler's decision and trace state, a non-recording span when it drops the span.
  const startIn: StartIn = (context, name, start = {}) => {
    // Most spans have no links: they share one empty list (it waits in the batch queue with them).
    let links = NO_LINKS;
    if (start.links?.length) {
      links = [];
      for (const link of start.links) {
        const linked = trace.getSpanContext(contextOf(link));
        if (linked) links.push({ context: linked });
      }
    }
    const kind = KINDS[start.kind ?? "internal"];
    const found = trace.getSpanContext(context);
    const parent = found && trace.isSpanContextValid(found) ? found : undefined;
    const spanId = ids.generateSpanId();
    const traceId = parent ? parent.traceId : ids.generateTraceId();
    const result = sampler.shouldSample(context, traceId, name, kind, NO_ATTRIBUTES, links);
    const sampled = result.decision === SamplingDecision.RECORD_AND_SAMPLED;
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      traceState: result.traceState ?? parent?.traceState,
    };
    if (result.decision === SamplingDecision.NOT_RECORD) return new OtelSpan(spanContext, undefined, startIn);
    const span = new RecordedSpan(name, kind, spanContext, parent, links, sink);
    for (const key in result.attributes) {
      const value = result.attributes[key];
      if (value !== undefined) span.setAttribute(key, value);
    }
    // Attributes are set after the start (the samplers here do not read them), and only when recorded.
    setDefined(span, start.attributes);
    return new OtelSpan(spanContext, span, startIn);
  };

  return {
    startSpan: (name, start = {}) => startIn(contextOf(start.parent), name, start),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
