/**
 * A span exporter for OTLP over HTTP on `fetch`, for Node and Workers alike: `http/json` bodies
 * come from the OpenTelemetry JS transformer package, `http/protobuf` bodies from
 * ./otlp-protobuf-encoder.ts (the transformer's bytes for less CPU); only the transport is ours.
 * The official OTLP HTTP exporters pick their transport by platform (Node's `http` module, or the
 * browser's XHR/`sendBeacon`), neither of which is workerd's `fetch` whose promise a Worker must
 * hand to `waitUntil`; one `fetch` exporter serves both runtimes the same way. The Node gateway
passes a `node:http` POST of the same shape (adapters/node/node-otlp-post.ts): cheaper per export.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { createOtlpProtobufEncoder } from "./otlp-protobuf-encoder.ts";
import type { OtlpProtocol } from "./read-otel-env.ts";

/** The subset of `fetch` the exporter uses (the Node adapter passes a `node:http` one). */
export type OtlpPost = (
  url: string,
  init: { method: "POST"; headers: Record<string, string>; body: Uint8Array<ArrayBuffer>; signal: AbortSignal },
) => Promise<{ ok: boolean; status: number; body: { cancel(): Promise<void> } | null }>;

export interface OtlpHttpExporterOptions {
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Default: the runtime's `fetch`. */
  fetch?: OtlpPost;
  /** Told about a failed export (status or error class, never the headers). */
  onError?(message: string): void;
}

/** Creates the exporter; every `export` is one POST. */
export function createOtlpHttpExporter(options: OtlpHttpExporterOptions): SpanExporter {
  const json = options.protocol === "http/json";
  const encode = json
    ? (spans: ReadableSpan[]) => JsonTraceSerializer.serializeRequest(spans)
    : createOtlpProtobufEncoder();
  const headers = {
    ...options.headers,
    "content-type": json ? "application/json" : "application/x-protobuf",
  };
  const inflight = new Set<Promise<void>>();
  let stopped = false;

  const send = async (spans: ReadableSpan[]): Promise<ExportResult> => {
    const body = encode(spans);
    if (!body) return { code: ExportResultCode.FAILED, error: new Error("spans could not be encoded") };
    try {
      const response = await (options.fetch ?? fetch)(options.url, {
        method: "POST",
        headers,
        body: body as Uint8Array<ArrayBuffer>,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await response.body?.cancel();
      if (response.ok) return { code: ExportResultCode.SUCCESS };
      options.onError?.(`the OTLP receiver answered ${response.status}`);
      return { code: ExportResultCode.FAILED, error: new Error(`HTTP ${response.status}`) };
    } catch (error) {
      const name = error instanceof Error ? error.name : "unknown";
      options.onError?.(`the OTLP receiver could not be reached (${name})`);
      return { code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(name) };
    }
  };

  return {
    export(spans, resultCallback) {
      if (stopped) return resultCallback({ code: ExportResultCode.FAILED, error: new Error("exporter shut down") });
      const work = send(spans).then(resultCallback);
      inflight.add(work);
      work.finally(() => inflight.delete(work));
    },
    async forceFlush() {
      await Promise.all(inflight);
    },
    async shutdown() {
      stopped = true;
      await Promise.all(inflight);
    },
  };
}
