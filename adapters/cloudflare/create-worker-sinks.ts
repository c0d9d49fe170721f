/**
 * Builds the sink of every configured destination the delivery engine delivers to on Workers,
 * through the Workers sink registry (adapters/cloudflare/worker-sink-registry.ts) keyed by the
 * same transport names as on Node (adapters/sink/registry.ts `transportOf`). A transport marked
 * "not on Workers" (Redis Streams, SMTP) or a missing queue binding is logged and the destination
 * left undelivered (docs/cloudflare-workers.md); a transport with no entry at all is a
 * configuration error, thrown.
 */
import type { DestinationConfig } from "../../src/config/schema.ts";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import { transportOf } from "../../src/delivery/transport-of.ts";
import type { Logger } from "../../src/ops/logger.ts";
import { notOnWorkers, WorkerSinkUnavailable, workerSinkTransports } from "./worker-sink-registry.ts";

/** One sink per deliverable destination, in config order. */
export function createWorkerSinks(
  destinations: readonly DestinationConfig[],
  bindings: Record<string, unknown>,
  logger: Logger,
): Sink[] {
  const sinks: Sink[] = [];
  const skip = (destination: DestinationConfig, why: string) =>
    logger.warn(`destination not delivered on Workers: ${why}`, { destination: destination.id });
  for (const destination of destinations) {
    if (destination.type === "stream") continue;
    const transport = transportOf(destination);
    if (transport !== undefined && Object.hasOwn(notOnWorkers, transport)) {
      skip(destination, notOnWorkers[transport] as string);
      continue;
    }
    const factory =
      transport !== undefined && Object.hasOwn(workerSinkTransports, transport)
        ? workerSinkTransports[transport]
        : undefined;
    if (!factory) {
      const known = [...Object.keys(workerSinkTransports), ...Object.keys(notOnWorkers)].join(", ");
      throw new Error(`no Workers sink for transport "${transport}" of destination ${destination.id}; known: ${known}`);
    }
    try {
      sinks.push(factory(destination, bindings));
    } catch (error) {
      if (!(error instanceof WorkerSinkUnavailable)) throw error;
      skip(destination, error.message);
    }
  }
  return sinks;
}
