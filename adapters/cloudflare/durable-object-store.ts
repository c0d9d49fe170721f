/**
 * The Durable Object store driver: the store contract (src/store/contract.ts) over one or more
 * `StoreShardObject`s (store-shard-object.ts). Placement and the global seq are described in
 * shard-placement.ts: a source's events and dedupe marks live in one shard (atomic claim and
 * append), kv entries by a hash of the key; `list` and `get` ask every shard and merge,
 * `readAfter` seals a tick on every shard first so that its cursor is exact.
 *
 * The driver passes its clock to every call, so TTLs follow the caller's `now` (the Worker's
 * clock in production, the conformance suite's clock in tests), and the external id of every
 * event it writes, read with the services it was handed (the shards know no service).
 */
import {
  type AppendResult,
  type ClaimResult,
  type EventPage,
  type EventQuery,
  type EventRecord,
  type StoreDriver,
  StoreUnavailableError,
  type StoreWiring,
} from "../../src/store/contract.ts";
import { createEventSummarizer } from "../../src/store/match-event-query.ts";
import type { DurableObjectNamespace, DurableObjectStub } from "./cloudflare-types.ts";
import { MAX_SHARDS, shardOf, sourceOfDedupeKey, tickOf } from "./shard-placement.ts";
import type { IndexedRecord, StoreShardObject } from "./store-shard-object.ts";

export interface DurableObjectStoreOptions extends StoreWiring {
  /** The `StoreShardObject` namespace binding. */
  namespace: DurableObjectNamespace<StoreShardObject>;
  /**
   * Number of shards, 1..16. Fixed for the life of a deployment: changing it moves sources to
   * other shards (their dedupe marks and events stay behind). Default 1.
   */
  shards?: number;
  /** Object name prefix: several gateways (or test cases) can share one namespace. Default `store`. */
  prefix?: string;
  /** Clock, epoch ms. Default `Date.now`. */
  now?: () => number;
}

type Shard = DurableObjectStub<StoreShardObject>;

/** Wraps a failed call to a shard as "cannot record right now" (answered 503 by the ingress). */
async function reach<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (cause) {
    throw new StoreUnavailableError(`durable object store: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** Creates the driver; no object is contacted until the first call. */
export function createDurableObjectStore(options: DurableObjectStoreOptions): StoreDriver {
  const count = options.shards ?? 1;
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS) {
    throw new RangeError(`store shards must be an integer from 1 to ${MAX_SHARDS}`);
  }
  const prefix = options.prefix ?? "store";
  const now = options.now ?? Date.now;
  const summarizeEvent = createEventSummarizer(options.services);
  const indexed = (record: EventRecord): IndexedRecord => ({ record, externalId: summarizeEvent(record).externalId });
  const ids = Array.from({ length: count }, (_, i) => options.namespace.idFromName(`${prefix}:${i}/${count}`));
  // A stub is bound to the request that made it (I/O objects cannot cross requests on Workers),
  // so stubs are made per call; ids are plain values and are kept.
  const shard = (i: number): Shard => options.namespace.get(ids[i] as (typeof ids)[number]);
  const bySource = (sourceId: string) => shardOf(sourceId, count);
  // The highest seq this driver has seen: sequential appends through it get increasing seqs
  // even across shards (shard-placement.ts).
  let floor = 0;
  let closed = false;

  const all = <T>(call: (s: Shard) => Promise<T>) => reach(Promise.all(ids.map((_, i) => call(shard(i)))));

  return {
    name: "durable-object",
    filterPushdown: true,
    claim(dedupeKey: string, claimTtlMs: number): Promise<ClaimResult> {
      return reach(shard(bySource(sourceOfDedupeKey(dedupeKey))).claim(dedupeKey, claimTtlMs, now()));
    },
    async append(record: EventRecord, dedupeKey: string, dedupeTtlMs: number): Promise<AppendResult> {
      if (closed) throw new StoreUnavailableError("durable object store is closed");
      const index = bySource(record.sourceId);
      const result = await reach(
        shard(index).append(indexed(record), dedupeKey, dedupeTtlMs, now(), floor, { index, count }),
      );
      floor = Math.max(floor, result.seq);
      return result;
    },
    async release(dedupeKey: string) {
      await reach(shard(bySource(sourceOfDedupeKey(dedupeKey))).release(dedupeKey));
    },
    async get(id: string) {
      const found = await all((s) => s.get(id));
      return found.find((record) => record !== undefined);
    },
    async list(query: EventQuery): Promise<EventPage> {
      const pages = await all((s) => s.list(query));
      const merged = pages.flatMap((page) => page.events).sort((a, b) => b.seq - a.seq);
      if (merged.length <= query.limit) return { events: merged, next: null };
      const events = merged.slice(0, query.limit);
      return { events, next: (events[events.length - 1] as EventRecord).seq };
    },
    async readAfter(afterSeq: number, limit: number, filter?: Omit<EventQuery, "after" | "limit">) {
      if (count === 1) return reach(shard(0).readAfter(afterSeq, limit, filter));
      // Seal the highest tick any shard has used, then read up to its end on every shard.
      const lasts = await all((s) => s.lastSeq());
      const tick = Math.max(...lasts.map((seq) => tickOf(seq, count)));
      const parts = await all((s) => s.readAfter(afterSeq, limit, filter, { tick, count }));
      return parts
        .flat()
        .sort((a, b) => a.seq - b.seq)
        .slice(0, limit);
    },
    async lastSeq() {
      return Math.max(0, ...(await all((s) => s.lastSeq())));
    },
    async purge(before: number) {
      const t = now();
      const counts = await all((s) => s.purge(before, t));
      return counts.reduce((sum, n) => sum + n, 0);
    },
    async removeEvents(ids: readonly string[]) {
      if (ids.length === 0) return 0;
      const counts = await all((s) => s.removeEvents([...ids]));
      return counts.reduce((sum, n) => sum + n, 0);
    },
    async redactEvents(records: readonly EventRecord[]) {
      const byShard = new Map<number, IndexedRecord[]>();
      for (const record of records) {
        const index = bySource(record.sourceId);
        byShard.set(index, [...(byShard.get(index) ?? []), indexed(record)]);
      }
      const counts = await reach(Promise.all([...byShard].map(([i, batch]) => shard(i).redactEvents(batch))));
      return counts.reduce((sum, n) => sum + n, 0);
    },
    async ping() {
      await all((s) => s.ping());
    },
    kvGet(key: string) {
      return reach(shard(shardOf(key, count)).kvGet(key, now()));
    },
    kvSet(key: string, value: string, ttlMs: number) {
      return reach(shard(shardOf(key, count)).kvSet(key, value, ttlMs, now()));
    },
    kvSetIfAbsent(key: string, value: string, ttlMs: number) {
      return reach(shard(shardOf(key, count)).kvSetIfAbsent(key, value, ttlMs, now()));
    },
    kvDelete(key: string) {
      return reach(shard(shardOf(key, count)).kvDelete(key));
    },
    async close() {
      closed = true;
    },
  };
}
