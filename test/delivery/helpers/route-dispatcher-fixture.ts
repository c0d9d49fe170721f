/**
 * The set-up of the route dispatcher tests (test/delivery/route-dispatcher-*.test.ts): a
 * dispatcher over the given store and outbox on manual time, with every routing step it starts
 * tracked so that `settle` waits for them, the records it creates collected, and events appended
 * as the ingress does. `countReadBacks` wraps a store so that the events read back are counted.
 */
import { memoryStore } from "../../../adapters/store/memory.ts";
import type { DeliveryRecord, DeliveryState, OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { createRouteDispatcher } from "../../../src/delivery/route-dispatcher.ts";
import { createLogger } from "../../../src/ops/logger.ts";
import { compileRoutes } from "../../../src/routes/match-routes.ts";
import type { EventRecord, StoreDriver } from "../../../src/store/contract.ts";
import { keyOf, makeRecord } from "../../store/sample-records.ts";
import { createManualTime } from "./manual-time.ts";

export interface DispatcherFixtureOptions {
  store: StoreDriver;
  outbox: OutboxStore;
  /** Default: every event to `hook`. */
  routes?: Parameters<typeof compileRoutes>[0];
  /** Default: `hook` starts pending, other destinations have no lane. */
  initialState?: (destinationId: string) => DeliveryState | undefined;
  pollIntervalMs: number;
  /** `settle` waits for failed routing steps too instead of failing with them (tests of failed writes). */
  settleFailures?: boolean;
}

/** A dispatcher on manual time (not started). */
export function dispatcherFixture(options: DispatcherFixtureOptions) {
  const work = new Set<Promise<unknown>>();
  const settle = async () => {
    while (work.size > 0)
      await Promise.all(options.settleFailures ? [...work].map((p) => p.catch(() => {})) : [...work]);
  };
  const time = createManualTime(settle);
  const created: DeliveryRecord[] = [];
  const dispatcher = createRouteDispatcher({
    store: options.store,
    outbox: options.outbox,
    routes: compileRoutes(options.routes ?? [{ types: ["*"], destinations: ["hook"] }]),
    clock: time.clock,
    scheduler: time.scheduler,
    logger: createLogger("silent"),
    initialState: options.initialState ?? ((id) => (id === "hook" ? "pending" : undefined)),
    onCreated: (records) => created.push(...records),
    track: (promise) => {
      work.add(promise);
      void promise.finally(() => work.delete(promise));
    },
    batchSize: 2,
    pollIntervalMs: options.pollIntervalMs,
  });
  /** Appends event n; resolves with the record as the store hands it to the hub. */
  const append = async (n: number): Promise<EventRecord> => {
    const record = makeRecord(n);
    const { seq } = await options.store.append(record, keyOf(record), 60_000);
    return { ...record, seq };
  };
  return { dispatcher, time, settle, created, append };
}

/** A memory store whose reads of the event log record the seqs they hand back (`reads`). */
export async function countReadBacks() {
  const memory = await memoryStore(undefined);
  const reads: number[] = [];
  const store: typeof memory = {
    ...memory,
    async readAfter(afterSeq, limit, filter) {
      const events = await memory.readAfter(afterSeq, limit, filter);
      reads.push(...events.map((event) => event.seq));
      return events;
    },
  };
  return { store, reads };
}
