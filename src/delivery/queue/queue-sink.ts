/**
 * The queue sink: one attempt appends the event's stream entry through a stream transport and
 * turns the outcome into a delivery result. Connection failures and timeouts are retryable;
 * a reply that no retry can change (the key holds another type) dead-letters at once.
 * Never throws: every failure becomes a result.
 */
import { createSink, type DeliveryAttemptResult, type Sink, type SinkFactory } from "../sink-contract.ts";
import { buildStreamEntry } from "./build-stream-entry.ts";
import type { QueueDestination } from "./queue-destination-schema.ts";
import type { StreamAppendResult, StreamTransport } from "./stream-transport.ts";

export interface QueueSinkDeps {
  /** The backend connection (e.g. `redisStreamTransport`). The sink closes it on `close`. */
  transport: StreamTransport;
}

/** Server replies that mean the same command can never succeed against this stream. */
const PERMANENT_REPLIES = new Set(["WRONGTYPE"]);

/** Maps a transport outcome to the delivery result the engine acts on. */
export function toQueueAttemptResult(outcome: StreamAppendResult): DeliveryAttemptResult {
  if (outcome.ok) return { ok: true };
  switch (outcome.failure) {
    case "unreachable":
      return { ok: false, error: `stream backend unreachable (${outcome.detail})` };
    case "timeout":
      return { ok: false, error: `stream backend timed out (${outcome.detail})` };
    case "aborted":
      return { ok: false, error: "attempt aborted" };
    case "reply":
      return PERMANENT_REPLIES.has(outcome.detail)
        ? { ok: false, permanent: true, error: `stream backend refused the entry (${outcome.detail})` }
        : { ok: false, error: `stream backend replied ${outcome.detail}` };
  }
}

/** Creates the sink of one `queue` destination. */
export const createQueueSink: SinkFactory<QueueDestination, QueueSinkDeps> = (destination, { transport }): Sink =>
  createSink(
    destination.id,
    "stream",
    async (record, signal, info) =>
      toQueueAttemptResult(await transport.append(buildStreamEntry(destination, record, info?.trace), signal)),
    () => transport.close(),
  );
