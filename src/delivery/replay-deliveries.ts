/**
 * Replay: delivering recorded events again. One event goes to all of its destinations (those it
 * has records for plus those the current routes name) or to one named destination; bulk replay
 * selects one destination's records by state and receive-time range (all dead letters by
 * default), optionally narrowed by a content filter on the event, or only counted (`dryRun`).
 * A replayed record starts its retry schedule afresh and keeps its attempt history; one still
 * waiting for a retry is simply made due now.
 */
import type { EventFilter } from "../filters/event-filter.ts";
import type { CompiledRoute } from "../routes/match-routes.ts";
import { resolveDestinations } from "../routes/match-routes.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import { createSlicer } from "../store/yield-slices.ts";
import { errorType } from "../tracing/error-type.ts";
import type { Tracing } from "../tracing/tracing-port.ts";
import { startReplaySpan } from "./delivery-spans.ts";
import type { DestinationLane } from "./destination-lane.ts";
import { type DeliveryRecord, isTerminal, type OutboxStore } from "./outbox-contract.ts";
import { buildDeliveries } from "./route-dispatcher.ts";

/** States a bulk replay may select. */
export type ReplayableState = "delivered" | "dead" | "failed-retrying" | "skipped";

export interface BulkReplayFilter {
  /** Default: dead letters only. */
  states?: readonly ReplayableState[];
  /** Event receive time range, epoch ms, inclusive from, exclusive to. */
  from?: number;
  to?: number;
  /** Only records whose event matches this content filter (src/filters). */
  filter?: EventFilter;
  /** Count what would be replayed, change nothing. */
  dryRun?: boolean;
}

export interface ReplayDeps {
  store: StoreDriver;
  outbox: OutboxStore;
  routes: readonly CompiledRoute[];
  clock: { now(): number };
  lanes: Pick<ReadonlyMap<string, DestinationLane>, "get">;
  /** A span per replay request, linked to the event's trace, when tracing is on. */
  tracing?: Tracing;
}

/** A record back to the start of its schedule, due now. */
function reset(record: DeliveryRecord, lane: DestinationLane, now: number): DeliveryRecord {
  return { ...record, state: lane.initialState(), nextAttemptAt: now, failures: 0, updatedAt: now };
}

/** Replays one event; resolves with the affected records, or undefined for an unknown event. */
export async function replayEvent(
  deps: ReplayDeps,
  eventId: string,
  destinationId?: string,
): Promise<DeliveryRecord[] | undefined> {
  const event = await deps.store.get(eventId);
  if (!event) return undefined;
  const span = deps.tracing && startReplaySpan(deps.tracing, event);
  try {
    const out = await replayTo(deps, event, destinationId);
    span?.setAttributes({ "gateway.destination.ids": out.map((record) => record.destinationId) });
    span?.end();
    return out;
  } catch (error) {
    span?.end(errorType(error));
    throw error;
  }
}

async function replayTo(deps: ReplayDeps, event: EventRecord, destinationId?: string): Promise<DeliveryRecord[]> {
  const eventId = event.id;
  const existing = new Map((await deps.outbox.listByEvent(eventId)).map((r) => [r.destinationId, r]));
  const targets = destinationId
    ? [destinationId]
    : [
        ...new Set([
          ...existing.keys(),
          ...resolveDestinations(deps.routes, event.sourceId, event.event, event.headers),
        ]),
      ];
  const now = deps.clock.now();
  const out: DeliveryRecord[] = [];
  for (const target of targets) {
    const lane = deps.lanes.get(target);
    if (!lane) continue;
    const record = existing.get(target);
    if (record && lane.holds(eventId)) {
      lane.expedite(eventId);
      out.push(record);
    } else if (record) {
      const next = reset(record, lane, now);
      await deps.outbox.saveDeliveries([next]);
      lane.add(next);
      out.push(next);
    } else {
      // A destination the event was never routed to (named explicitly, or routes changed).
      const only = [{ id: "replay", destinations: [target], matches: () => true }];
      const [fresh] = buildDeliveries(event, only, now, () => lane.initialState());
      if (!fresh) continue;
      await deps.outbox.createDeliveries([fresh], 0);
      lane.add(fresh);
      out.push(fresh);
    }
  }
  return out;
}

/** Replays the records of one destination matching `filter`; resolves with how many. */
export async function replayBulk(deps: ReplayDeps, destinationId: string, filter: BulkReplayFilter): Promise<number> {
  const lane = deps.lanes.get(destinationId);
  if (!lane) return 0;
  const states = filter.states ?? ["dead"];
  let after: number | undefined;
  let count = 0;
  // Filter evaluation over stored events runs in slices (yield-slices.ts).
  const pause = createSlicer();
  do {
    const page = await deps.outbox.listDeliveries({
      destinationId,
      states,
      from: filter.from,
      to: filter.to,
      after,
      limit: 500,
    });
    const now = deps.clock.now();
    const batch: DeliveryRecord[] = [];
    for (const record of page.deliveries) {
      await pause();
      if (filter.filter) {
        const event = await deps.store.get(record.eventId);
        if (!event || !filter.filter.matchesRecord(event)) continue;
      }
      if (filter.dryRun) {
        if (lane.holds(record.eventId) || isTerminal(record.state)) count++;
      } else if (lane.holds(record.eventId)) {
        lane.expedite(record.eventId);
        count++;
      } else if (isTerminal(record.state)) batch.push(reset(record, lane, now));
    }
    if (batch.length > 0) await deps.outbox.saveDeliveries(batch);
    // Oldest first, so per-subject order and the lane's seq order stay natural.
    for (const record of batch.reverse()) lane.add(record);
    count += batch.length;
    after = page.next ?? undefined;
  } while (after !== undefined);
  return count;
}
