/**
 * Tracing on Workers: the same `OTEL_*` variables as on Node, read from the bindings (`[vars]`
 * or secrets, e.g. `OTEL_EXPORTER_OTLP_HEADERS`), exported over `fetch`. The callers hand
 * `flush()` to `waitUntil` after the work of a request or an alarm, so an isolate that goes idle
 * still sends its spans (docs/tracing.md).
 */
import type { Tracing } from "../../src/tracing/tracing-port.ts";
import { createOtelTracing } from "../tracing/otel-tracing.ts";
import { readOtelEnv } from "../tracing/read-otel-env.ts";

/** The tracing the bindings configure, or undefined when no OTLP endpoint is bound. */
export function createWorkerTracing(env: object): Tracing | undefined {
  const options = readOtelEnv(env as Record<string, unknown>);
  return (
    options &&
    createOtelTracing(options, {
      onExportError: (message) => console.error(JSON.stringify({ level: "warn", msg: "trace export failed", message })),
    })
  );
}
