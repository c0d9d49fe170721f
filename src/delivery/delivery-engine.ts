/**
 * The delivery engine: the route dispatcher feeding the outbox, and one lane per destination
 * that has a sink (`stream` destinations belong to the live stream and are not ours). It resumes
 * from the outbox on start; what the admin API needs (health, pause/resume, replay) is the
 * facade of delivery-admin.ts over its lanes and outbox.
 */
import type { Enricher } from "../enrich/create-enricher.ts";
import type { Clock } from "../ops/clock.ts";
import type { Logger } from "../ops/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { WriteHealth } from "../ops/write-health.ts";
import type { CompiledRoute } from "../routes/match-routes.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { LiveHub } from "../stream/hub-contract.ts";
import type { TraceSpan, Tracing } from "../tracing/tracing-port.ts";
import { createDeliveryAdmin } from "./delivery-admin.ts";
import { resolveDeliveryPolicy } from "./delivery-policy.ts";
import { createAttemptTracer } from "./delivery-spans.ts";
import { createDestinationLane, type DestinationLane } from "./destination-lane.ts";
import type { LaneObserver } from "./lane-observer.ts";
import { createLeasePoller, type LeasePoller } from "./lease-poller.ts";
import {
  type DeliveryRecord,
  type DeliveryState,
  type DestinationState,
  isTerminal,
  type OutboxStore,
} from "./outbox-contract.ts";
import { createRetryingPersist } from "./outbox-write-retry.ts";
import type { ReplayDeps } from "./replay-deliveries.ts";
import { createRouteDispatcher } from "./route-dispatcher.ts";
import { type Scheduler, systemScheduler } from "./scheduler.ts";
import { ERASED_CANCEL, eventTexts, holdsEventText, scrubDelivery } from "./scrub-delivery.ts";
import type { DestinationShape, Sink } from "./sink-contract.ts";
import { createWorkTracker } from "./work-tracker.ts";

export interface DeliveryEngineOptions {
  outbox: OutboxStore;
  /** One sink per destination that is delivered by this engine. */
  sinks: readonly Sink[];
  /** Default: setTimeout. Tests inject a manual scheduler with a manual clock. */
  scheduler?: Scheduler;
  /** Default Math.random (retry jitter). */
  random?: () => number;
  /** Journal poll period behind the event hub, ms. Default 1000. */
  pollIntervalMs?: number;
  /** Events routed per outbox write. Default 256. */
  batchSize?: number;
  /** How long shutdown waits for attempts in flight before aborting them, ms. Default 5000. */
  stopGraceMs?: number;
  /** Shared outboxes: how long a claimed record stays leased without renewal, ms. Default 30000. */
  leaseMs?: number;
  /**
   * Told each lane's shutdown signal, which every attempt of that destination shares (one abort
   * listener per attempt in flight, up to its `concurrency`): the Node adapter lifts its
   * listener-leak warning on it (adapters/node/lane-signal.ts).
   */
  onLaneSignal?: (signal: AbortSignal) => void;
  /**
   * Runs a callback once the current turn of the event loop is over: the outbox writes of every
   * attempt that ended in the turn go as one write (outbox-write-retry.ts). Node: `setImmediate`.
   * Default `queueMicrotask`.
   */
  afterTurn?: (run: () => void) => void;
}

/** What the engine uses of the gateway. */
export interface DeliveryEngineDeps {
  /** Every configured destination (each sink's must be among them). */
  destinations: readonly DestinationShape[];
  routes: readonly CompiledRoute[];
  store: StoreDriver;
  /** Wakes the route dispatcher after each durable append. */
  hub: Pick<LiveHub, "subscribe">;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  /** Told whether outbox writes succeed (`/healthz` "cannot record"). */
  writeHealth?: WriteHealth;
  /** Told every attempt's outcome and every disable/resume of a lane (operational events). */
  observeLane?: LaneObserver;
  /** Attaches upstream resources before delivery for routes with `enrich` (src/enrich), when any. */
  enricher?: Pick<Enricher, "enrich">;
  /** Spans of attempts, routing and replays (docs/tracing.md), when tracing is on. */
  tracing?: Tracing;
}

export type { DestinationHealth } from "./delivery-admin.ts";

export type DeliveryEngine = ReturnType<typeof createDeliveryEngine>;

/** What `eraseDeliveries` did: deliveries cancelled, and the texts it removed from the records. */
export interface DeliveriesErased {
  cancelled: number;
  texts: string[];
}

/** How long an erased event's records are scrubbed on every write (an attempt in flight ends). */
const ERASED_LATELY_MS = 15 * 60_000;

/** True when the record's last attempt found its event erased (a record the lane still held). */
const endsErased = (record: DeliveryRecord) => record.attempts.at(-1)?.error === ERASED_CANCEL;

/** Creates the engine; nothing runs until `start`. */
export function createDeliveryEngine(ctx: DeliveryEngineDeps, options: DeliveryEngineOptions) {
  const { outbox } = options;
  const { clock, logger } = ctx;
  const scheduler = options.scheduler ?? systemScheduler;
  const tracker = createWorkTracker((error) => logger.error("delivery work failed", { error: String(error) }));
  const lanes = new Map<string, DestinationLane>();
  // What a reload replaces (`reload`): destinations, routes, enricher and the sinks by destination.
  const current = {
    destinations: ctx.destinations,
    routes: ctx.routes,
    enricher: ctx.enricher,
  };
  const sinks = new Map(options.sinks.map((sink) => [sink.destinationId, sink]));
  /** Lanes retired by a reload whose attempts in flight have not finished yet. */
  const retiring = new Set<DestinationLane>();
  let types = new Map(current.destinations.map((d) => [d.id, d.type]));
  let unsubscribe: (() => void) | undefined;
  // A shared outbox (several instances) hands records to lanes only through leases.
  let leases: LeasePoller | undefined;
  const ordered: string[] = [];

  // Failed writes are retried and the admin views show the unsaved state (outbox-write-retry.ts).
  const writes = createRetryingPersist({
    outbox,
    scheduler,
    logger,
    writeHealth: ctx.writeHealth,
    now: () => clock.now(),
    afterTurn: options.afterTurn,
  });
  // Events erased lately (id -> until when): an attempt that started before the erasure may end
  // after it, with a record still holding the old texts; those are scrubbed on the way out too.
  const erasedLately = new Map<string, number>();
  const persist = (records: DeliveryRecord[]) => {
    if (erasedLately.size === 0 && !records.some(endsErased)) return writes.persist(records);
    return writes.persist(records.map((r) => (erasedLately.has(r.eventId) || endsErased(r) ? scrubDelivery(r) : r)));
  };

  const dispatcher = createRouteDispatcher({
    store: ctx.store,
    outbox,
    get routes() {
      return current.routes;
    },
    clock,
    scheduler,
    logger,
    tracing: ctx.tracing,
    initialState: (id) => lanes.get(id)?.initialState(),
    onCreated: (records, lease, states) => {
      if (leases) return lease ? leases.adopt(records, lease, states) : leases.wake();
      for (const record of records) lanes.get(record.destinationId)?.add(record);
    },
    creationLease: () => leases?.creationLease(),
    track: tracker.track,
    batchSize: options.batchSize ?? 256,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
  });

  const enricherFor = (destinationId: string) => {
    const { enricher } = current;
    return enricher && ((record: EventRecord, span?: TraceSpan) => enricher.enrich(record, [destinationId], span));
  };

  // With leases, a replayed record is saved due now and claimed by whichever instance polls first.
  const leasedLanes = {
    get: (id: string) => {
      const lane = lanes.get(id);
      return lane && leases ? { ...lane, add: () => leases?.wake() } : lane;
    },
  };
  const replayDeps: ReplayDeps = {
    store: ctx.store,
    outbox,
    get routes() {
      return current.routes;
    },
    clock,
    lanes: leasedLanes,
    tracing: ctx.tracing,
  };

  /** The lane of one sink's destination, in the state `saved` says (`held`: see LaneDeps.held). */
  const openLane = (sink: Sink, saved: DestinationState | undefined, held?: boolean): DestinationLane => {
    const destination = current.destinations.find((d) => d.id === sink.destinationId);
    if (!destination) throw new Error(`sink for unknown destination "${sink.destinationId}"`);
    const policy = resolveDeliveryPolicy(destination);
    if (policy.ordering === "subject" && !ordered.includes(sink.destinationId)) ordered.push(sink.destinationId);
    const deps = {
      sink,
      policy,
      store: ctx.store,
      clock,
      scheduler,
      random: options.random ?? Math.random,
      metrics: ctx.metrics,
      logger,
      persist,
      persistDestination: (state: Parameters<OutboxStore["saveDestinationState"]>[0]) =>
        outbox.saveDestinationState(state),
      track: tracker.track,
      prepare: enricherFor(sink.destinationId),
      traceAttempt: ctx.tracing && createAttemptTracer(ctx.tracing, destination),
      onSignal: options.onLaneSignal,
      observe: ctx.observeLane,
      held,
      leaseHeld: (eventId: string, now: number) => leases?.leaseHeld(sink.destinationId, eventId, now) ?? true,
      leaseLapsed: () => leases?.leaseLapsed(),
    };
    return createDestinationLane(sink.destinationId, deps, saved);
  };

  /** Takes a retired lane's attempts in flight to their end, then closes its sink. */
  const retireLane = (lane: DestinationLane, sink: Sink | undefined, then?: () => void): Promise<void> => {
    retiring.add(lane);
    const done = lane.idle().then(async () => {
      retiring.delete(lane);
      then?.();
      await sink?.close().catch(() => {});
    });
    tracker.track(done);
    return done;
  };

  /** The saved state of a running lane (paused or disabled carry over to its replacement). */
  const stateOf = (lane: DestinationLane): DestinationState => {
    const health = lane.health();
    return {
      id: lane.id,
      paused: health.state === "paused",
      disabled: health.state === "disabled",
      reason: health.reason,
      updatedAt: clock.now(),
    };
  };

  return {
    /**
     * Applies a reloaded configuration to what happens next: new routes route the next events;
     * `added` and `changed` destinations (with their new sinks) get a lane; a changed one takes
     * over the old lane's waiting records and starts once the old lane's attempts in flight have
     * finished; a removed one attempts nothing more, its attempts in flight finish, and its
     * unfinished deliveries stay in the outbox (resumed if it comes back). Returns, per removed
     * destination, how many deliveries were left unfinished, and `retired`, which resolves once
     * the attempts in flight of every retired lane have finished.
     */
    async reload(next: {
      destinations: readonly DestinationShape[];
      routes: readonly CompiledRoute[];
      enricher?: Pick<Enricher, "enrich">;
      /** New sinks of the destinations added or changed (the others keep theirs). */
      sinks: readonly Sink[];
      removed: readonly string[];
      /**
       * The outbox's destination states (`listDestinationStates`), read before the call, so
       * everything up to the new lanes happens in the caller's turn (no event is routed between).
       */
      saved: readonly DestinationState[];
    }): Promise<{ kept: Record<string, number>; retired: Promise<void> }> {
      current.destinations = next.destinations;
      current.routes = next.routes;
      current.enricher = next.enricher;
      types = new Map(next.destinations.map((d) => [d.id, d.type]));
      const kept: Record<string, number> = {};
      const retired: Promise<void>[] = [];
      for (const id of next.removed) {
        const lane = lanes.get(id);
        if (!lane) continue;
        lanes.delete(id);
        const index = ordered.indexOf(id);
        if (index >= 0) ordered.splice(index, 1);
        kept[id] = lane.retire().length + lane.health().inflight;
        retired.push(retireLane(lane, sinks.get(id)));
        sinks.delete(id);
      }
      const fresh: Sink[] = [];
      for (const sink of next.sinks) {
        const id = sink.destinationId;
        const old = lanes.get(id);
        const oldSink = sinks.get(id);
        sinks.set(id, sink);
        if (!old) {
          fresh.push(sink);
          continue;
        }
        const index = ordered.indexOf(id);
        if (index >= 0) ordered.splice(index, 1);
        const lane = openLane(sink, stateOf(old), true);
        lanes.set(id, lane);
        for (const record of old.retire((record) => lane.add(record))) lane.add(record);
        retired.push(retireLane(old, oldSink, () => lane.open()));
      }
      const saved = new Map(next.saved.map((s) => [s.id, s]));
      const reloadAt = clock.now();
      for (const sink of fresh) lanes.set(sink.destinationId, openLane(sink, saved.get(sink.destinationId)));
      dispatcher.refresh();
      if (fresh.length > 0) {
        // A destination added back finds the deliveries it left unfinished in the outbox.
        const added = new Set(fresh.map((sink) => sink.destinationId));
        if (leases) leases.wake();
        else {
          for (const record of await outbox.listActive()) {
            // Only what was left from before: records routed since are the new lane's already.
            if (!added.has(record.destinationId) || record.createdAt >= reloadAt) continue;
            const lane = lanes.get(record.destinationId);
            if (lane?.holds(record.eventId)) continue;
            const state: DeliveryState =
              lane?.initialState() === "paused" ? "paused" : record.failures > 0 ? "failed-retrying" : "pending";
            lane?.add(state === record.state ? record : { ...record, state });
          }
        }
      }
      return { kept, retired: Promise.all(retired).then(() => undefined) };
    },

    /** Loads destination states and unfinished deliveries, then starts routing. */
    async start() {
      const saved = new Map((await outbox.listDestinationStates()).map((s) => [s.id, s]));
      for (const sink of options.sinks) {
        lanes.set(sink.destinationId, openLane(sink, saved.get(sink.destinationId)));
      }
      if (outbox.shared) {
        leases = createLeasePoller({
          outbox,
          lanes,
          clock,
          scheduler,
          logger,
          track: tracker.track,
          persist,
          owner: crypto.randomUUID(),
          leaseMs: options.leaseMs ?? 30_000,
          pollIntervalMs: options.pollIntervalMs ?? 1000,
          batchSize: options.batchSize ?? 256,
          // Kept up to date by `reload`.
          ordered,
        });
        leases.start();
        unsubscribe = ctx.hub.subscribe((record) => dispatcher.offer(record));
        return dispatcher.start();
      }
      const now = clock.now();
      const fixed: DeliveryRecord[] = [];
      const recovered: [DestinationLane, DeliveryRecord][] = [];
      for (const record of await outbox.listActive()) {
        const lane = lanes.get(record.destinationId);
        if (!lane) continue;
        // "delivering" after a restart means the attempt's outcome was never recorded: try again.
        const state: DeliveryState =
          lane.initialState() === "paused" ? "paused" : record.failures > 0 ? "failed-retrying" : "pending";
        const due = record.state === "delivering" ? Math.min(record.nextAttemptAt, now) : record.nextAttemptAt;
        const next = state === record.state ? record : { ...record, state, nextAttemptAt: due };
        if (next !== record) fixed.push(next);
        recovered.push([lane, next]);
      }
      if (fixed.length > 0) await persist(fixed);
      for (const [lane, record] of recovered) lane.add(record);
      unsubscribe = ctx.hub.subscribe((record) => dispatcher.offer(record));
      await dispatcher.start();
    },

    /** Stops routing and attempting; waits for attempts in flight (aborting them after the grace). */
    async stop() {
      unsubscribe?.();
      dispatcher.stop();
      leases?.stop();
      for (const lane of lanes.values()) lane.halt();
      const abort = setTimeout(() => {
        for (const lane of [...lanes.values(), ...retiring]) lane.abortInflight();
      }, options.stopGraceMs ?? 5000);
      await tracker.idle();
      clearTimeout(abort);
      await writes.stop();
      await leases
        ?.release()
        .catch((error) => logger.warn("releasing delivery leases failed", { error: String(error) }));
      await Promise.all([...sinks.values()].map((sink) => sink.close().catch(() => {})));
    },

    /**
     * An event this instance just recorded (ingress, operational events): on a shared outbox it
     * is routed from this copy when it follows the routing cursor, without waiting for the
     * hub's read of the event log (which still hands over every instance's events). A
     * single-process hub hands local appends over at once anyway: nothing to do then.
     */
    offerLocal(record: EventRecord) {
      if (leases) dispatcher.offerLocal(record);
    },

    /** Resolves once no routing, attempt or outbox write is running (tests with a manual clock). */
    settled: () => tracker.idle(),

    // Health, pause/resume, the delivery records and replay: the admin facade (delivery-admin.ts).
    ...createDeliveryAdmin({ lanes, typeOf: (id) => types.get(id), outbox, writes, replay: replayDeps }),

    /**
     * Erasure's share of the delivery records (src/lifecycle/erase-events.ts): the unfinished
     * deliveries of these events end dead with `cancelled: the event was erased` and are never
     * attempted again, and every record of them loses the texts that may quote the event (attempt
     * errors, transform console lines, the last error; scrub-delivery.ts), also in what the lanes
     * show. Resolves with how many deliveries were cancelled and the texts removed (so that their
     * copies elsewhere, e.g. in operational events, can be found).
     */
    async eraseDeliveries(eventIds: readonly string[]): Promise<DeliveriesErased> {
      const at = clock.now();
      const until = at + ERASED_LATELY_MS;
      for (const [id, end] of erasedLately) if (end <= at) erasedLately.delete(id);
      let cancelled = 0;
      const texts = new Set<string>();
      const changed: DeliveryRecord[] = [];
      for (const eventId of eventIds) {
        erasedLately.set(eventId, until);
        for (const record of (await outbox.listByEvent(eventId)).map(writes.overlay)) {
          for (const text of eventTexts(record)) texts.add(text);
          if (!isTerminal(record.state)) {
            cancelled++;
            // Never attempted again here (an attempt in flight ends as a tombstone's does).
            lanes.get(record.destinationId)?.forget(eventId);
            changed.push(
              scrubDelivery({ ...record, state: "dead", lastError: ERASED_CANCEL, updatedAt: at, nextAttemptAt: at }),
            );
          } else if (holdsEventText(record)) changed.push(scrubDelivery(record));
        }
      }
      if (changed.length > 0) await persist(changed);
      if (texts.size > 0) for (const lane of lanes.values()) lane.forgetError(texts);
      return { cancelled, texts: [...texts] };
    },

    /** Drops final records older than `before`; returns the count. */
    purge: (before: number) => outbox.purge(before),
  };
}
