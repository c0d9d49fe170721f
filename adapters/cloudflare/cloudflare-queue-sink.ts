/**
 * The `queue` sink on Cloudflare Queues: one attempt sends the event's entry (the same fields
 * as the Redis Streams entry, src/delivery/queue/build-stream-entry.ts) as one JSON message
 * through the producer binding. A message over the Queues limit (128 KB) can never be sent and
 * dead-letters at once; any other failure is retried on the destination's schedule.
 */

import { buildStreamEntry } from "../../src/delivery/queue/build-stream-entry.ts";
import type { CloudflareQueueDestination } from "../../src/delivery/queue/cloudflare-queue-destination-schema.ts";
import { createSink, type Sink } from "../../src/delivery/sink-contract.ts";
import type { TraceHeaders } from "../../src/tracing/tracing-port.ts";
import type { QueueProducer } from "./cloudflare-types.ts";

/** Cloudflare Queues' largest message body. */
export const QUEUE_MESSAGE_LIMIT_BYTES = 128 * 1024;

/** The message body of one event: `{ id, type, source, subject?, time, payload, traceparent?, tracestate? }`. */
export function toQueueMessage(record: Parameters<Sink["deliver"]>[0], trace?: TraceHeaders): Record<string, string> {
  return Object.fromEntries(buildStreamEntry({ stream: "", maxLen: 1 }, record, trace).fields);
}

/** Creates the sink of one `cloudflare-queues` destination over its producer binding. */
export function createCloudflareQueueSink(destination: CloudflareQueueDestination, producer: QueueProducer): Sink {
  const encoder = new TextEncoder();
  return createSink(
    destination.id,
    "cloudflare-queues",
    async (record, _signal, info) => {
      const message = toQueueMessage(record, info?.trace);
      const size = encoder.encode(JSON.stringify(message)).byteLength;
      if (size > QUEUE_MESSAGE_LIMIT_BYTES) {
        return { ok: false, permanent: true, error: `message of ${size} bytes exceeds the queue limit` };
      }
      try {
        await producer.send(message, { contentType: "json" });
        return { ok: true };
      } catch (error) {
        return { ok: false, error: `queue send failed (${error instanceof Error ? error.name : "unknown"})` };
      }
    },
    async () => {},
  );
}
