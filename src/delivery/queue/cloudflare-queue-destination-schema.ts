/**
 * The `queue` destination on Cloudflare Queues (`driver: "cloudflare-queues"`): every routed
 * event is sent as one message through the Worker's producer binding named by `binding`
 * (wrangler.toml `[[queues.producers]]`). Available on Workers only; docs/cloudflare-workers.md.
 * The message body is JSON with the fields of the Redis entry
 * (queue-destination-schema.ts): `id`, `type`, `source`, `subject` (when known), `time`,
 * `payload` (the CloudEvent as JSON). Delivery is at least once; consumers drop repeats by `id`.
 */
import * as v from "valibot";
import { DeliveryPolicyEntries } from "../delivery-policy.ts";

const id = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or -"));

export const CloudflareQueueDestinationSchema = v.strictObject({
  id,
  type: v.literal("queue"),
  driver: v.literal("cloudflare-queues"),
  /** The sink transport that delivers it (only on Workers). */
  transport: v.optional(v.literal("cloudflare-queues"), "cloudflare-queues"),
  /** Name of the producer binding, e.g. `EVENTS_QUEUE`. */
  binding: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, "a binding name such as EVENTS_QUEUE")),
  /** Retry schedule, breaker, concurrency, rate limit and ordering (see delivery-policy.ts). */
  ...DeliveryPolicyEntries,
});

export type CloudflareQueueDestination = v.InferOutput<typeof CloudflareQueueDestinationSchema>;
