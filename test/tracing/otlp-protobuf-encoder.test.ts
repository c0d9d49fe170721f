/**
 * The gateway's OTLP/protobuf encoder (adapters/tracing/otlp-protobuf-encoder.ts) writes the same
 * bytes as the OpenTelemetry transformer's `ProtobufTraceSerializer`, for the spans the gateway
 * makes through its tracing port and for every other shape the SDK can record (events, links,
 * each attribute type, long and non-ASCII strings, several resources and scopes).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, InMemorySpanExporter, type ReadableSpan, TracerProvider } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { createOtelTracing } from "../../adapters/tracing/otel-tracing.ts";
import { createOtlpProtobufEncoder } from "../../adapters/tracing/otlp-protobuf-encoder.ts";
import { readOtelEnv } from "../../adapters/tracing/read-otel-env.ts";
import { describeEventSpan } from "../../src/tracing/event-span-attributes.ts";

function expectSameBytes(spans: ReadableSpan[]): void {
  const encode = createOtlpProtobufEncoder();
  const expected = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
  expect(Buffer.from(encode(spans)).toString("hex")).toBe(expected.toString("hex"));
  // The buffer is reused: a second body from the same encoder is still the same.
  expect(Buffer.from(encode(spans)).toString("hex")).toBe(expected.toString("hex"));
}

function sdkProvider(resource: Record<string, string>) {
  const provider = new TracerProvider({ resource: resourceFromAttributes(resource), sampler: new AlwaysOnSampler() });
  return { provider };
}

describe("createOtlpProtobufEncoder", () => {
  it("encodes the spans of a webhook made through the tracing port as the transformer does", async () => {
    const exporter = new InMemorySpanExporter();
    const options = readOtelEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,region=eu-west-1",
      OTEL_SERVICE_NAME: "webhook-gateway",
    });
    if (!options) throw new Error("tracing should be on");
    const tracing = createOtelTracing(options, { exporter });
    for (let i = 0; i < 3; i++) {
      const server = tracing.startSpan("POST /webhooks/{sourceId}", {
        kind: "server",
        parent: {
          traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
          tracestate: "vendor=opaque,other=x",
        },
        attributes: { "http.request.method": "POST", "url.path": "/webhooks/esign", "client.address": undefined },
      });
      const verify = server.startChild("verify webhook");
      verify.end(i === 1 ? "signature_mismatch" : undefined);
      describeEventSpan(server, "esign", {
        id: `evt_${i}`,
        type: "agreement.completed",
        source: "https://esign.example/accounts/7",
        subject: i === 2 ? undefined : "agreements/ag-81",
        upstreamid: "7f0c2d",
      });
      const record = server.startChild("record event");
      record.end();
      const attempt = tracing.startSpan("POST", {
        kind: "client",
        parent: server.headers(),
        links: [{ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }],
        attributes: {
          "gateway.destination.ids": ["crm", "events", "ünïcode"],
          "gateway.delivery.attempt": 2,
          "gateway.enrichment.used": true,
        },
      });
      attempt.end("503");
      server.setAttributes({ "http.response.status_code": 202 });
      server.end();
    }
    await tracing.flush();
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBe(12);
    expectSameBytes(spans);
    await tracing.shutdown();
  });

  it("encodes events, links with attributes, every attribute type and long strings as the transformer does", () => {
    const { provider } = sdkProvider({ "service.name": "gätewäy", "host.name": "h".repeat(300) });
    const tracer = provider.getTracer("svc-gateway", "1.2.3");
    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: "4BF92F3577B34DA6A3CE929D0E0E4736",
      spanId: "00F067AA0BA902B7",
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: new TraceState("a=1,b=2"),
    });
    const span = tracer.startSpan(
      "x".repeat(200),
      {
        kind: SpanKind.CONSUMER,
        links: [
          {
            context: {
              traceId: "0af7651916cd43dd8448eb211c80319c",
              spanId: "b7ad6b7169203331",
              traceFlags: TraceFlags.NONE,
              traceState: new TraceState("k=v"),
            },
            attributes: { reason: "replay", count: 3 },
          },
        ],
      },
      remote,
    );
    span.setAttributes({
      text: "plain",
      unicode: "Grüße 🌍",
      long: "y".repeat(20_000),
      zero: 0,
      negative: -42,
      big: 2 ** 40,
      float: 3.25,
      nan: Number.NaN,
      yes: true,
      no: false,
      strings: ["a", "ß"],
      numbers: [1, 2.5, -3],
      booleans: [true, false],
      holes: ["a", null as unknown as string, "c"],
      empty: [],
    });
    span.addEvent("first", { detail: "one", n: 1 });
    span.addEvent("second");
    span.setStatus({ code: SpanStatusCode.ERROR, message: "fäiled" });
    span.end();
    const ok = tracer.startSpan("ok", { kind: SpanKind.PRODUCER });
    ok.setStatus({ code: SpanStatusCode.OK });
    ok.end();
    expectSameBytes([span, ok] as unknown as ReadableSpan[]);
  });

  it("groups spans of several resources and scopes as the transformer does", () => {
    const a = sdkProvider({ "service.name": "a" });
    const b = sdkProvider({ "service.name": "b", "deployment.environment": "test" });
    const spans: ReadableSpan[] = [];
    for (let i = 0; i < 40; i++) {
      const { provider } = i % 3 === 0 ? b : a;
      const tracer = provider.getTracer(i % 2 === 0 ? "one" : "two", i % 2 === 0 ? undefined : "2.0.0", {
        schemaUrl: i % 4 === 1 ? "https://opentelemetry.io/schemas/1.26.0" : undefined,
      });
      const span = tracer.startSpan(`span ${i}`, { attributes: { i } });
      span.end();
      // The SDK's spans are its ReadableSpans.
      spans.push(span as unknown as ReadableSpan);
    }
    expectSameBytes(spans);
    expectSameBytes([]);
  });
});
