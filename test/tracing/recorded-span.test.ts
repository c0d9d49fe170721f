/**
 * The spans of the tracing port (adapters/tracing/otel-tracing.ts, recorded by recorded-span.ts)
 * export exactly what the SDK's own Tracer and Span export for the same operations: the same OTLP
 * request once the random ids and the clock are set aside (names, kinds, attributes, status,
 * parent and link structure, flags, trace state, resource, scope), for each sampler.
 */
import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  InMemorySpanExporter,
  ParentBasedSampler,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { createOtelTracing } from "../../adapters/tracing/otel-tracing.ts";
import { readOtelEnv } from "../../adapters/tracing/read-otel-env.ts";
import type { TraceHeaders } from "../../src/tracing/tracing-port.ts";

const CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const UNSAMPLED_CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
const LINKED = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/** The OTLP/JSON request of `spans`, with ids replaced by their order of appearance and times by 0. */
function comparable(spans: ReadableSpan[]): unknown {
  const request = JSON.parse(new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)));
  const names = new Map<string, string>();
  const known = new Set([CALLER.slice(3, 35), CALLER.slice(36, 52), LINKED.slice(3, 35), LINKED.slice(36, 52)]);
  return JSON.parse(JSON.stringify(request), (key, value) => {
    if (/TimeUnixNano$/.test(key)) return 0;
    if ((key === "traceId" || key === "spanId" || key === "parentSpanId") && typeof value === "string") {
      if (known.has(value)) return value;
      if (!names.has(value)) names.set(value, `id${names.size}`);
      return names.get(value);
    }
    return value;
  });
}

/** One webhook's spans, a client span linked to another trace, and a child of an ended error span. */
async function throughPort(sampler: string, caller: string): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const options = readOtelEnv({
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
    OTEL_TRACES_SAMPLER: sampler,
    OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
  });
  if (!options) throw new Error("tracing should be on");
  const tracing = createOtelTracing(options, { exporter });
  const server = tracing.startSpan("POST /webhooks/{sourceId}", {
    kind: "server",
    parent: { traceparent: caller, tracestate: "vendor=x" },
    attributes: { "http.request.method": "POST", "client.address": undefined, "gateway.source.id": "esign" },
  });
  server.startChild("verify webhook").end("signature_mismatch");
  server.setAttributes({ "gateway.event.id": "evt_1", "gateway.destination.ids": ["a", "b"], n: 3, ok: true });
  const record = server.startChild("record event");
  record.end();
  server.setAttributes({ "http.response.status_code": 202 });
  server.end();
  server.setAttributes({ late: "ignored" });
  const attempt = tracing.startSpan("POST", {
    kind: "client",
    parent: server.headers(),
    links: [{ traceparent: LINKED }, { traceparent: "not a traceparent" }],
  });
  attempt.end("503");
  tracing.startSpan("replay event", { links: [{ traceparent: LINKED }] }).end();
  await tracing.flush();
  return exporter.getFinishedSpans();
}

/** The same operations on the SDK's own tracer. */
async function throughSdk(sampler: string, caller: string): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  const samplers = {
    always_on: new AlwaysOnSampler(),
    parentbased_always_on: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    parentbased_always_off: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "deployment.environment": "test", "service.name": "svc-gateway" }),
    sampler: samplers[sampler as keyof typeof samplers],
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer("svc-gateway");
  const propagator = new W3CTraceContextPropagator();
  const getter = {
    keys: (c: TraceHeaders) => Object.keys(c),
    get: (c: TraceHeaders, k: string) => c[k as "traceparent"],
  };
  const contextOf = (headers: TraceHeaders): Context => propagator.extract(ROOT_CONTEXT, headers, getter);
  const fail = (span: Span, error: string) => {
    if (span.isRecording()) {
      span.setAttribute("error.type", error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    }
    span.end();
  };
  const server = tracer.startSpan(
    "POST /webhooks/{sourceId}",
    { kind: SpanKind.SERVER },
    contextOf({ traceparent: caller, tracestate: "vendor=x" }),
  );
  if (server.isRecording()) server.setAttributes({ "http.request.method": "POST", "gateway.source.id": "esign" });
  const inServer = trace.setSpan(ROOT_CONTEXT, server);
  fail(tracer.startSpan("verify webhook", { kind: SpanKind.INTERNAL }, inServer), "signature_mismatch");
  if (server.isRecording())
    server.setAttributes({ "gateway.event.id": "evt_1", "gateway.destination.ids": ["a", "b"], n: 3, ok: true });
  tracer.startSpan("record event", { kind: SpanKind.INTERNAL }, inServer).end();
  if (server.isRecording()) server.setAttributes({ "http.response.status_code": 202 });
  server.end();
  const linked = trace.getSpanContext(contextOf({ traceparent: LINKED }));
  const links = linked ? [{ context: linked }] : [];
  const { traceId, spanId, traceFlags } = server.spanContext();
  const serverHeaders = {
    traceparent: `00-${traceId}-${spanId}-0${traceFlags}`,
    tracestate: server.spanContext().traceState?.serialize(),
  };
  fail(tracer.startSpan("POST", { kind: SpanKind.CLIENT, links }, contextOf(serverHeaders)), "503");
  tracer.startSpan("replay event", { kind: SpanKind.INTERNAL, links }, ROOT_CONTEXT).end();
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

describe("the tracing port's spans", () => {
  it.each([
    ["always_on", CALLER],
    ["parentbased_always_on", CALLER],
    ["parentbased_always_on", UNSAMPLED_CALLER],
    ["parentbased_always_off", CALLER],
  ])("export what the SDK's spans export (%s, caller %s)", async (sampler, caller) => {
    const ours = await throughPort(sampler, caller);
    const sdk = await throughSdk(sampler, caller);
    expect(ours.map((span) => span.name)).toEqual(sdk.map((span) => span.name));
    expect(comparable(ours)).toEqual(comparable(sdk));
    for (const span of ours) expect(span.duration[0] >= 0 && span.duration[1] >= 0).toBe(true);
  });
});
