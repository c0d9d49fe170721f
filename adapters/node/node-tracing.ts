/**
 * Tracing on Node: the `OTEL_*` variables of the process environment (adapters/tracing), or
 * nothing when no OTLP endpoint is set (docs/tracing.md). Export failures are logged as
 * warnings, without the exporter's headers.
 */
import type { Logger } from "../../src/ops/logger.ts";
import type { Tracing } from "../../src/tracing/tracing-port.ts";
import { readOtelEnv } from "../tracing/read-otel-env.ts";

/**
 * The tracing `env` configures, or undefined when it is off. Throws a ConfigError for bad values.
 * The OpenTelemetry SDK (several MB of heap) is loaded only when tracing is on.
 */
export async function createNodeTracing(
  env: Record<string, string | undefined>,
  logger: Logger,
): Promise<Tracing | undefined> {
  const options = readOtelEnv(env);
  if (!options) return undefined;
  // Origin and path only: credentials in a URL's user info or query never reach the log.
  const endpoint = new URL(options.url);
  logger.info("tracing on", {
    endpoint: `${endpoint.origin}${endpoint.pathname}`,
    protocol: options.protocol,
    sampler: options.sampler,
  });
  const { createOtelTracing } = await import("../tracing/otel-tracing.ts");
  const { createNodeOtlpPost } = await import("./node-otlp-post.ts");
  return createOtelTracing(options, {
    fetch: createNodeOtlpPost(),
    onExportError: (message) => logger.warn("trace export failed", { message }),
  });
}
