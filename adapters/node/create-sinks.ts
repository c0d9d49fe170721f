/**
 * Builds the sink of every configured destination the delivery engine delivers to (Node
 * runtime). Each transport is imported when a destination needs it. `stream` destinations are
 * the live stream's, not the engine's.
 */
import type { DestinationConfig } from "../../src/config/schema.ts";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import type { Logger } from "../../src/ops/logger.ts";

export interface SinkDeps {
  logger: Logger;
}

/** One sink per deliverable destination, in config order. */
export async function createSinks(destinations: readonly DestinationConfig[], deps: SinkDeps): Promise<Sink[]> {
  const sinks: Sink[] = [];
  for (const destination of destinations) {
    switch (destination.type) {
      case "http": {
        const { httpWebhookSink } = await import("../transports/http-transport.ts");
        sinks.push(httpWebhookSink(destination, undefined));
        break;
      }
      case "queue": {
        if (destination.driver === "cloudflare-queues") {
          deps.logger.warn("cloudflare-queues destinations are delivered on Workers only", {
            destination: destination.id,
          });
          break;
        }
        const { redisStreamSink } = await import("../transports/redis-stream.ts");
        sinks.push(redisStreamSink(destination, undefined));
        break;
      }
      case "email": {
        if (destination.transport === "http-email") {
          const { httpEmailSink } = await import("../transports/http-email.ts");
          sinks.push(httpEmailSink(destination, undefined));
          break;
        }
        const { smtpEmailSink } = await import("../transports/smtp.ts");
        sinks.push(smtpEmailSink(destination, undefined));
        break;
      }
      case "stream":
        break;
      default: {
        // Unreachable while every type has a case (destination is `never` here); kept for types
        // added to the schema before their Node transport.
        const other = destination as DestinationConfig;
        deps.logger.warn("no transport for this destination type on Node; its events are not delivered", {
          destination: other.id,
          type: other.type,
        });
      }
    }
  }
  return sinks;
}
