/**
 * The sink transports on Workers, by the same names as the Node registry
 * (adapters/sink/registry.ts): each name either has a Workers factory here or an explicit
 * "not on Workers" mark saying what to use instead. test/architecture/worker-sinks.test.ts
 * fails when a transport has neither, so a new destination type cannot be skipped silently on
 * Workers; the Workers factories run the sink conformance suite in workerd
 * (test/workerd/sink-conformance.test.ts).
 */
import type { DestinationConfig } from "../../src/config/schema.ts";
import type { HttpEmailDestination } from "../../src/delivery/email/http-email-destination-schema.ts";
import { createHttpSink } from "../../src/delivery/http/http-sink.ts";
import type { CloudflareQueueDestination } from "../../src/delivery/queue/cloudflare-queue-destination-schema.ts";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import { httpEmailSink } from "../sink/http-email.ts";
import { createCloudflareQueueSink } from "./cloudflare-queue-sink.ts";
import type { QueueProducer } from "./cloudflare-types.ts";
import { createFetchHttpTransport } from "./fetch-http-transport.ts";

/** A refusal to build a sink that the operator can act on (a missing binding): logged, not thrown. */
export class WorkerSinkUnavailable extends Error {}

/** Builds the sink of one destination from the Worker's bindings; throws WorkerSinkUnavailable when it cannot. */
export type WorkerSinkFactory = (destination: DestinationConfig, bindings: Record<string, unknown>) => Sink;

/** Transport name -> its factory on Workers. */
export const workerSinkTransports: Readonly<Record<string, WorkerSinkFactory>> = {
  http: (destination) => {
    const http = destination as Extract<DestinationConfig, { type: "http" }>;
    const policy = { allowPrivateNetworks: http.allowPrivateNetworks, allowCidrs: http.allowCidrs };
    return createHttpSink(http, { transport: createFetchHttpTransport(policy) });
  },
  "cloudflare-queues": (destination, bindings) => {
    const queue = destination as CloudflareQueueDestination;
    const producer = bindings[queue.binding] as QueueProducer | undefined;
    if (!producer || typeof producer.send !== "function") {
      throw new WorkerSinkUnavailable(`no queue producer binding named ${queue.binding}`);
    }
    return createCloudflareQueueSink(queue, producer);
  },
  "http-email": (destination) => httpEmailSink(destination as HttpEmailDestination, undefined),
};

/** Transport name -> why Workers cannot deliver with it, and what to use instead. */
export const notOnWorkers: Readonly<Record<string, string>> = {
  "redis-stream": "Redis Streams is not reachable from Workers; use driver cloudflare-queues",
  smtp: "SMTP is not available on Workers; use transport http-email",
};
