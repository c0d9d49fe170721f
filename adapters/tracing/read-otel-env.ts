/**
 * The standard OpenTelemetry SDK variables the gateway reads (the same names as process
 * environment on Node and as Worker bindings on Workers), validated with valibot: a bad value
 * stops start-up naming the variable, never echoing a header value (it may hold a credential).
 * Tracing is off unless an OTLP endpoint is set (docs/tracing.md).
 */
import * as v from "valibot";
import { ConfigError } from "../../src/config/resolve-config.ts";

export type OtlpProtocol = "http/protobuf" | "http/json";
export type SamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

export interface OtelOptions {
  /** Where spans are POSTed (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `…_ENDPOINT` + `/v1/traces`). */
  url: string;
  protocol: OtlpProtocol;
  /** Extra request headers (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TRACES_HEADERS`). */
  headers: Record<string, string>;
  /** Per-export request timeout, ms (`OTEL_EXPORTER_OTLP_TIMEOUT`, default 10 000). */
  timeoutMs: number;
  serviceName: string;
  resourceAttributes: Record<string, string>;
  sampler: SamplerName;
  /** `OTEL_TRACES_SAMPLER_ARG` for the ratio samplers (default 1). */
  samplerRatio: number;
  batch: {
    scheduledDelayMillis: number;
    exportTimeoutMillis: number;
    maxQueueSize: number;
    maxExportBatchSize: number;
  };
}

export type OtelEnv = Record<string, unknown>;

const int = (min: number) =>
  v.pipe(v.string(), v.trim(), v.regex(/^\d{1,9}$/, "an integer"), v.transform(Number), v.minValue(min));
const url = v.pipe(v.string(), v.trim(), v.url("an http(s) URL"), v.regex(/^https?:/i, "an http(s) URL"));

const EnvSchema = v.object({
  OTEL_SDK_DISABLED: v.optional(v.picklist(["true", "false", "TRUE", "FALSE", ""])),
  OTEL_EXPORTER_OTLP_ENDPOINT: v.optional(url),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: v.optional(url),
  OTEL_EXPORTER_OTLP_PROTOCOL: v.optional(
    v.picklist(["http/protobuf", "http/json"], 'one of "http/protobuf", "http/json"'),
  ),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: v.optional(
    v.picklist(["http/protobuf", "http/json"], 'one of "http/protobuf", "http/json"'),
  ),
  OTEL_EXPORTER_OTLP_HEADERS: v.optional(v.string()),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: v.optional(v.string()),
  OTEL_EXPORTER_OTLP_TIMEOUT: v.optional(int(1)),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: v.optional(int(1)),
  OTEL_SERVICE_NAME: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1))),
  OTEL_RESOURCE_ATTRIBUTES: v.optional(v.string()),
  OTEL_TRACES_SAMPLER: v.optional(
    v.picklist(
      [
        "always_on",
        "always_off",
        "traceidratio",
        "parentbased_always_on",
        "parentbased_always_off",
        "parentbased_traceidratio",
      ],
      "always_on, always_off, traceidratio or parentbased_* of those",
    ),
  ),
  OTEL_TRACES_SAMPLER_ARG: v.optional(
    v.pipe(v.string(), v.trim(), v.transform(Number), v.number("a number"), v.minValue(0), v.maxValue(1)),
  ),
  OTEL_BSP_SCHEDULE_DELAY: v.optional(int(0)),
  OTEL_BSP_EXPORT_TIMEOUT: v.optional(int(1)),
  OTEL_BSP_MAX_QUEUE_SIZE: v.optional(int(1)),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: v.optional(int(1)),
});

/** `k1=v1,k2=v2` with percent-encoded keys and values (W3C Baggage form, as the OTel spec says). */
function parsePairs(name: string, text: string | undefined, reveal: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    const key = at > 0 ? safeDecode(pair.slice(0, at).trim()) : undefined;
    const value = at > 0 ? safeDecode(pair.slice(at + 1).trim()) : undefined;
    if (!key || value === undefined) {
      throw new ConfigError([`${name}: expected key=value pairs separated by commas${reveal ? ` ("${pair}")` : ""}`]);
    }
    out[key] = value;
  }
  return out;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Only the string variables of `env` whose name starts with OTEL_ (bindings may hold objects). */
function otelStrings(env: OtelEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith("OTEL_") && typeof value === "string" && value !== "") out[name] = value;
  }
  return out;
}

/** The tracing options of `env`, or undefined when tracing is off (no endpoint, or the SDK disabled). */
export function readOtelEnv(env: OtelEnv): OtelOptions | undefined {
  const parsed = v.safeParse(EnvSchema, otelStrings(env));
  if (!parsed.success) {
    throw new ConfigError(
      parsed.issues.map((issue) => `${v.getDotPath(issue) ?? "OTEL_*"}: expected ${issue.expected ?? issue.message}`),
    );
  }
  const e = parsed.output;
  if (e.OTEL_SDK_DISABLED?.toLowerCase() === "true") return undefined;
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base && `${base.replace(/\/+$/, "")}/v1/traces`);
  if (!endpoint) return undefined;
  const resourceAttributes = parsePairs("OTEL_RESOURCE_ATTRIBUTES", e.OTEL_RESOURCE_ATTRIBUTES, true);
  return {
    url: endpoint,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf",
    headers: {
      ...parsePairs("OTEL_EXPORTER_OTLP_HEADERS", e.OTEL_EXPORTER_OTLP_HEADERS, false),
      ...parsePairs("OTEL_EXPORTER_OTLP_TRACES_HEADERS", e.OTEL_EXPORTER_OTLP_TRACES_HEADERS, false),
    },
    timeoutMs: e.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? e.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000,
    serviceName: e.OTEL_SERVICE_NAME ?? resourceAttributes["service.name"] ?? "svc-gateway",
    resourceAttributes,
    sampler: e.OTEL_TRACES_SAMPLER ?? "parentbased_always_on",
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
    batch: {
      scheduledDelayMillis: e.OTEL_BSP_SCHEDULE_DELAY ?? 5000,
      exportTimeoutMillis: e.OTEL_BSP_EXPORT_TIMEOUT ?? 30_000,
      maxQueueSize: e.OTEL_BSP_MAX_QUEUE_SIZE ?? 2048,
      maxExportBatchSize: e.OTEL_BSP_MAX_EXPORT_BATCH_SIZE ?? 512,
    },
  };
}
