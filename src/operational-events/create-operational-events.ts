/**
 * The gateway's operational events (docs/data-lifecycle.md): watches delivery lanes, webhook
 * verification failures and store writes, and records a `gateway.*` event for each change of
 * state, in the order the changes happened. Events of the gateway itself are not watched (an
 * alert about a destination never counts against a destination, and never goes to the one it is
 * about: src/routes/match-routes.ts), so no alert can feed on itself.
 *
 * State is per instance (several instances each watch what they deliver and receive). An event
 * the store cannot take right now (it is the store that fails) waits in memory, at most 100, and
 * is recorded with the first write that succeeds again.
 */
import type { LaneObservation } from "../delivery/lane-observer.ts";
import type { Scheduler } from "../delivery/scheduler.ts";
import { GATEWAY_SOURCE_ID } from "../events/gateway-source.ts";
import { type GatewayEventDeps, recordGatewayEvent } from "../lifecycle/gateway-events.ts";
import { scrubOperationalData } from "../lifecycle/scrub-operational-data.ts";
import type { Logger } from "../ops/logger.ts";
import { type Condition, createDestinationWatch, type DestinationWatch, type Emitted } from "./destination-watch.ts";
import type { OperationalEventsConfig } from "./operational-events-schema.ts";
import { createSourceWatch, type SourceWatch } from "./source-watch.ts";

export interface OperationalEventsDeps extends GatewayEventDeps {
  logger: Logger;
  scheduler: Scheduler;
}

/** Verification failures count toward a spike; other rejections (404, 413, ...) do not. */
const VERIFICATION_CODES = new Set(["invalid_signature", "timestamp_out_of_tolerance"]);
const MAX_PENDING = 100;

export type { Condition } from "./destination-watch.ts";

export function createOperationalEvents(deps: OperationalEventsDeps, config: OperationalEventsConfig) {
  const destinations = new Map<string, DestinationWatch>();
  const sources = new Map<string, SourceWatch>();
  const timers = new Set<() => void>();
  let pending: Emitted[] = [];
  let chain: Promise<void> = Promise.resolve();
  let store: { since: number; what: string } | undefined;
  let stopped = false;
  const now = () => deps.clock.now();

  /** Records queued events one after the other; what the store refuses waits for the next success. */
  const drain = async () => {
    while (pending.length > 0) {
      const next = pending[0] as Emitted;
      try {
        await recordGatewayEvent(deps, next.type, next.data);
      } catch (error) {
        deps.logger.warn("operational event not recorded yet", { type: next.type, error: String(error) });
        return;
      }
      pending.shift();
      deps.logger.info("operational event", { type: next.type });
    }
  };

  const emit = (events: Emitted[]) => {
    if (events.length === 0 || stopped) return;
    pending.push(...events);
    if (pending.length > MAX_PENDING) pending = pending.slice(-MAX_PENDING);
    chain = chain.then(drain);
  };

  const later = (ms: number, run: () => void) => {
    const cancel = deps.scheduler.setTimer(ms, () => {
      timers.delete(cancel);
      if (!stopped) run();
    });
    timers.add(cancel);
  };

  const watchOf = (id: string) => {
    let watch = destinations.get(id);
    if (!watch) {
      watch = createDestinationWatch(id, config);
      destinations.set(id, watch);
    }
    return watch;
  };

  const flushDead = (watch: DestinationWatch) => {
    const batch = watch.flushDead(now());
    if (batch) emit([batch]);
  };

  return {
    /** The delivery lanes' observer (DeliveryEngineDeps.observeLane). */
    observeLane(o: LaneObservation) {
      if (o.kind === "state") return emit(watchOf(o.destination).onState(o));
      if (o.sourceId === GATEWAY_SOURCE_ID) return;
      const watch = watchOf(o.destination);
      const hadDead = watch.hasDead();
      emit(watch.onAttempt(o));
      if (!hadDead && watch.hasDead()) later(config.deadBatchSeconds * 1000, () => flushDead(watch));
    },

    /** A webhook answered with an error `code` (only verification failures count). */
    onWebhookRejected(sourceId: string, code: string) {
      if (!VERIFICATION_CODES.has(code)) return;
      let watch = sources.get(sourceId);
      if (!watch) {
        watch = createSourceWatch(sourceId, config);
        sources.set(sourceId, watch);
      }
      const wasActive = watch.active();
      emit(watch.onFailure(code, now()));
      if (!wasActive && watch.active()) {
        const step = Math.max(1000, (config.verificationFailures.windowSeconds * 1000) / 10);
        const recheck = () => {
          const events = (watch as SourceWatch).check(now());
          emit(events);
          if ((watch as SourceWatch).active()) later(step, recheck);
        };
        later(step, recheck);
      }
    },

    /** The store's writes started failing (`failing`) or succeed again (write-health.ts). */
    onWriteHealth(failing: boolean, what: string, at: number) {
      if (failing && !store) {
        store = { since: at, what };
        emit([{ type: "gateway.store.unwritable", data: { since: new Date(at).toISOString(), writes: what } }]);
      } else if (!failing && store) {
        const since = store.since;
        store = undefined;
        emit([
          {
            type: "gateway.store.recovered",
            data: { since: new Date(since).toISOString(), duration_seconds: Math.round((at - since) / 1000) },
          },
        ]);
      }
    },

    /**
     * Forgets what quotes erased events (src/lifecycle/erase-events.ts): the watches' last errors
     * and the `last_error` of events still waiting to be recorded.
     */
    forgetErased(erasedIds: ReadonlySet<string>, texts: ReadonlySet<string>) {
      for (const watch of destinations.values()) watch.forgetErased(erasedIds, texts);
      pending = pending.map((e) => {
        const data = scrubOperationalData(e.data, erasedIds, texts);
        return data ? { ...e, data } : e;
      });
    },

    /** The conditions that hold now (`GET /conditions`, the console's banner). */
    conditions(): Condition[] {
      const t = now();
      const out: Condition[] = [];
      if (store)
        out.push({
          type: "gateway.store.unwritable",
          subject: "store",
          since: new Date(store.since).toISOString(),
          data: { writes: store.what },
        });
      for (const watch of destinations.values()) out.push(...watch.conditions());
      for (const watch of sources.values()) out.push(...watch.conditions(t));
      return out;
    },

    /** Reports pending dead-letter batches and waits until queued events are recorded (or refused). */
    async stop() {
      for (const watch of destinations.values()) flushDead(watch);
      await chain;
      stopped = true;
      for (const cancel of timers) cancel();
      timers.clear();
    },
  };
}

export type OperationalEvents = ReturnType<typeof createOperationalEvents>;
