/**
 * The OTEL_* variables as the gateway reads them (adapters/tracing/read-otel-env.ts): off
 * without an endpoint, the spec's defaults and precedence, and errors that name the variable
 * without echoing a header value.
 */
import { describe, expect, it } from "vitest";
import { readOtelEnv } from "../../adapters/tracing/read-otel-env.ts";
import { ConfigError } from "../../src/config/resolve-config.ts";

describe("readOtelEnv", () => {
  it.each([
    ["no endpoint", {}],
    ["an empty endpoint", { OTEL_EXPORTER_OTLP_ENDPOINT: "" }],
    ["the SDK disabled", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }],
  ])("is off with %s", (_name, env) => {
    expect(readOtelEnv(env)).toBeUndefined();
  });

  it("applies the specification's defaults", () => {
    expect(readOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      headers: {},
      timeoutMs: 10_000,
      serviceName: "svc-gateway",
      resourceAttributes: {},
      sampler: "parentbased_always_on",
      samplerRatio: 1,
      batch: { scheduledDelayMillis: 5000, exportTimeoutMillis: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    });
  });

  it("prefers the traces-specific variables and reads every documented one", () => {
    const options = readOtelEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://ignored:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector.example/custom/path",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D%3D,x-tenant=one",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-tenant=two",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2500",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes,deployment.environment=prod%20eu",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_BSP_EXPORT_TIMEOUT: "1000",
      OTEL_BSP_MAX_QUEUE_SIZE: "4096",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "256",
    });
    expect(options).toMatchObject({
      url: "https://collector.example/custom/path",
      protocol: "http/json",
      headers: { "x-api-key": "abc==", "x-tenant": "two" },
      timeoutMs: 2500,
      serviceName: "from-attributes",
      resourceAttributes: { "deployment.environment": "prod eu" },
      sampler: "parentbased_traceidratio",
      samplerRatio: 0.25,
      batch: { scheduledDelayMillis: 100, exportTimeoutMillis: 1000, maxQueueSize: 4096, maxExportBatchSize: 256 },
    });
    expect(readOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SERVICE_NAME: "svc-a" })?.serviceName).toBe(
      "svc-a",
    );
  });

  it.each([
    ["OTEL_EXPORTER_OTLP_ENDPOINT", { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }],
    ["OTEL_EXPORTER_OTLP_PROTOCOL", { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }],
    ["OTEL_TRACES_SAMPLER", { OTEL_TRACES_SAMPLER: "sometimes" }],
    ["OTEL_TRACES_SAMPLER_ARG", { OTEL_TRACES_SAMPLER_ARG: "2" }],
    ["OTEL_BSP_SCHEDULE_DELAY", { OTEL_BSP_SCHEDULE_DELAY: "soon" }],
    ["OTEL_RESOURCE_ATTRIBUTES", { OTEL_RESOURCE_ATTRIBUTES: "no-equals-sign" }],
  ])("stops start-up naming %s", (name, env) => {
    const read = () => readOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...env });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(name);
  });

  it("never echoes a header value in its error", () => {
    const read = () =>
      readOtelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "secret-token-value" });
    expect(read).toThrow("OTEL_EXPORTER_OTLP_HEADERS");
    try {
      read();
    } catch (error) {
      expect(String(error)).not.toContain("secret-token-value");
    }
  });
});
