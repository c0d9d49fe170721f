/**
 * Builds the sink of every configured destination the delivery engine delivers to on Workers:
 * `http` over `fetch`, `queue` with `driver: "cloudflare-queues"` over its producer binding,
 * `email` over the `http-email` transport. Destinations Workers cannot serve (Redis Streams,
 * SMTP) are logged and left undelivered (README "Deploy to Cloudflare Workers").
 */
import type { DestinationConfig } from "../../src/config/schema.ts";
import { createHttpSink } from "../../src/delivery/http/http-sink.ts";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import type { Logger } from "../../src/ops/logger.ts";
import { httpEmailSink } from "../sink/http-email.ts";
import { createCloudflareQueueSink } from "./cloudflare-queue-sink.ts";
import type { QueueProducer } from "./cloudflare-types.ts";
import { createFetchHttpTransport } from "./fetch-http-transport.ts";

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
    if (destination.type === "http") {
      const policy = { allowPrivateNetworks: destination.allowPrivateNetworks, allowCidrs: destination.allowCidrs };
      sinks.push(createHttpSink(destination, { transport: createFetchHttpTransport(policy) }));
    } else if (destination.type === "queue") {
      if (destination.driver !== "cloudflare-queues") {
        skip(destination, "Redis Streams is not reachable from Workers; use driver cloudflare-queues");
        continue;
      }
      const producer = bindings[destination.binding] as QueueProducer | undefined;
      if (!producer || typeof producer.send !== "function") {
        skip(destination, `no queue producer binding named ${destination.binding}`);
        continue;
      }
      sinks.push(createCloudflareQueueSink(destination, producer));
    } else if (destination.type === "email") {
      if (destination.transport === "http-email") sinks.push(httpEmailSink(destination, undefined));
      else skip(destination, "SMTP is not available on Workers; use transport http-email");
    }
  }
  return sinks;
}
