/**
 * The sink transports on Node, by name (which one delivers each destination type by default is
 * src/delivery/transport-of.ts; docs/architecture.md#add-a-destination-type). Each entry loads one
 * sink transport that
 * exports one typed `SinkFactory` (src/delivery/sink-contract.ts); every transport runs
 * test/conformance/sink-conformance.ts from test/drivers/sink/<name>.test.ts. Adding a
 * transport is one line here plus its file; a destination picks a non-default one with a
 * `transport` field in its schema.
 */
import type { DestinationConfig } from "../../src/config/schema.ts";
import type { Sink, SinkFactory } from "../../src/delivery/sink-contract.ts";
import { transportOf } from "../../src/delivery/transport-of.ts";
import type { Logger } from "../../src/ops/logger.ts";
import { type DriverRegistry, loadDriver } from "../driver-registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: each transport takes its own destination type
export const sinkTransports: DriverRegistry<SinkFactory<any, any>> = {
  http: () => import("./http.ts").then((m) => m.httpWebhookSink),
  "redis-stream": () => import("./redis-stream.ts").then((m) => m.redisStreamSink),
  smtp: () => import("./smtp.ts").then((m) => m.smtpEmailSink),
  "http-email": () => import("./http-email.ts").then((m) => m.httpEmailSink),
};

export interface SinkDeps {
  logger: Logger;
}

/** One sink per destination the delivery engine delivers to, in config order. */
export async function createConfiguredSinks(
  destinations: readonly DestinationConfig[],
  deps: SinkDeps,
): Promise<Sink[]> {
  const sinks: Sink[] = [];
  for (const destination of destinations) {
    if (destination.type === "stream") continue;
    const transport = transportOf(destination);
    if (transport === undefined) {
      deps.logger.warn("no transport for this destination type; its events are not delivered", {
        destination: destination.id,
        type: destination.type,
      });
      continue;
    }
    const factory = await loadDriver(sinkTransports, "sink", transport);
    sinks.push(factory(destination, undefined));
  }
  return sinks;
}
