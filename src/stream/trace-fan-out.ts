/**
 * The span of one live fan-out (docs/tracing.md): a messaging `publish` span in the event's
 * trace, saying to which stream destinations and how many open subscriber sessions it went.
 */
import type { EventRecord } from "../store/contract.ts";
import { eventSpanAttributes } from "../tracing/event-span-attributes.ts";
import type { Tracing } from "../tracing/tracing-port.ts";

/** Records the fan-out of `record` to `sessions` subscribers. */
export function traceFanOut(tracing: Tracing, record: EventRecord, destinations: string[], sessions: number): void {
  tracing
    .startSpan("publish live", {
      kind: "producer",
      parent: record.event,
      attributes: {
        ...eventSpanAttributes(record.sourceId, record.event),
        "messaging.system": "gateway_live_stream",
        "messaging.operation.type": "publish",
        "messaging.destination.name": "live",
        "messaging.message.id": record.id,
        "gateway.destination.ids": destinations,
        "gateway.stream.sessions": sessions,
      },
    })
    .end();
}
