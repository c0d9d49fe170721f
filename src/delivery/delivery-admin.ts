/**
 * What the delivery admin API asks of the engine (src/delivery/delivery-admin-api.ts, the event
 * log's deliveries): destination health, pause and resume, the delivery records, replay. The
 * engine (delivery-engine.ts) keeps the delivery loop and hands this facade its lanes, its
 * outbox and its unsaved-write overlay.
 */
import type { DestinationLane, LaneHealth } from "./destination-lane.ts";
import type { DeliveryPage, DeliveryQuery, DeliveryState, OutboxStore } from "./outbox-contract.ts";
import type { RetryingPersist } from "./outbox-write-retry.ts";
import { type BulkReplayFilter, type ReplayDeps, replayBulk, replayEvent } from "./replay-deliveries.ts";

export interface DestinationHealth extends LaneHealth {
  type: string;
  /** Records per state in the outbox. */
  counts: Partial<Record<DeliveryState, number>>;
}

/** What the facade reads of the engine. */
export interface DeliveryAdminDeps {
  /** The running lanes, by destination id. */
  lanes: ReadonlyMap<string, DestinationLane>;
  /** The configured type of a destination (the current one after a reload). */
  typeOf: (id: string) => string | undefined;
  outbox: Pick<OutboxStore, "listDeliveries" | "listByEvent">;
  /** Failed writes waiting for a retry show in what the admin reads (outbox-write-retry.ts). */
  writes: Pick<RetryingPersist, "overlay" | "countByState">;
  replay: ReplayDeps;
}

/** The admin facade over one engine's lanes and outbox. */
export function createDeliveryAdmin(deps: DeliveryAdminDeps) {
  const { lanes, outbox, writes, replay } = deps;
  return {
    /** True when this engine delivers to `id`. */
    has: (id: string) => lanes.has(id),

    async destinations(): Promise<DestinationHealth[]> {
      const counts = await writes.countByState();
      return [...lanes.values()].map((lane) => ({
        ...lane.health(),
        type: deps.typeOf(lane.id) ?? "unknown",
        counts: counts[lane.id] ?? {},
      }));
    },

    async pause(id: string) {
      await lanes.get(id)?.pause();
    },

    async resume(id: string) {
      await lanes.get(id)?.resume();
    },

    listDeliveries: async (query: DeliveryQuery): Promise<DeliveryPage> => {
      const page = await outbox.listDeliveries(query);
      return { ...page, deliveries: page.deliveries.map(writes.overlay) };
    },
    deliveriesOfEvent: async (eventId: string) => (await outbox.listByEvent(eventId)).map(writes.overlay),

    /** Delivers a recorded event again (see replay-deliveries.ts); undefined for an unknown event. */
    replayEvent: (eventId: string, destinationId?: string) => replayEvent(replay, eventId, destinationId),

    /** Replays one destination's records in `states` (default dead) received in [from, to). */
    replayBulk: (destinationId: string, filter: BulkReplayFilter) => replayBulk(replay, destinationId, filter),
  };
}

export type DeliveryAdmin = ReturnType<typeof createDeliveryAdmin>;
