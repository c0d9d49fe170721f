/**
 * The in-memory state of an outbox: records by key, per-destination seq order, per-event keys,
 * state counts, destination states and the routing cursor, with the queries of the contract.
 * Used by the memory outbox driver and by the one-time import of the removed journal store
 * (adapters/store/sqlite/journal-import/, which rebuilds it from the old outbox log), so both
 * answer queries identically. Records are copied in and out: callers never alias them.
 */
import {
  type DeliveryPage,
  type DeliveryQuery,
  type DeliveryRecord,
  type DeliveryState,
  type DestinationState,
  deliveryKey,
  isTerminal,
  type OutboxStore,
} from "./outbox-contract.ts";

/** A copy that shares nothing mutable with the original. */
export function copyDelivery(record: DeliveryRecord): DeliveryRecord {
  return { ...record, attempts: record.attempts.map((a) => ({ ...a })) };
}

export interface OutboxIndex {
  cursor: number;
  /** Inserts missing records, moves the cursor forward; returns the inserted ones (copies). */
  create(records: readonly DeliveryRecord[], cursor: number): DeliveryRecord[];
  save(records: readonly DeliveryRecord[]): void;
  get(eventId: string, destinationId: string): DeliveryRecord | undefined;
  byEvent(eventId: string): DeliveryRecord[];
  list(query: DeliveryQuery): DeliveryPage;
  active(): DeliveryRecord[];
  counts(): Record<string, Partial<Record<DeliveryState, number>>>;
  destinationStates: Map<string, DestinationState>;
  /** Removes terminal records updated before `before`; returns them. */
  purge(before: number): DeliveryRecord[];
  /** Removes one record if present. */
  remove(eventId: string, destinationId: string): void;
  /** Every record (compaction). */
  all(): IterableIterator<DeliveryRecord>;
  size(): number;
}

/** Creates an empty index. */
export function createOutboxIndex(): OutboxIndex {
  const records = new Map<string, DeliveryRecord>();
  /** Per destination: seqs in ascending order (one record per event and destination). */
  const seqs = new Map<string, number[]>();
  const bySeq = new Map<string, Map<number, DeliveryRecord>>();
  const events = new Map<string, Set<string>>();
  const counts: Record<string, Partial<Record<DeliveryState, number>>> = {};

  const count = (destinationId: string, state: DeliveryState, by: number) => {
    const perState = counts[destinationId] ?? {};
    counts[destinationId] = perState;
    perState[state] = (perState[state] ?? 0) + by;
  };

  const insert = (record: DeliveryRecord) => {
    const key = deliveryKey(record.eventId, record.destinationId);
    records.set(key, record);
    let order = seqs.get(record.destinationId);
    let lookup = bySeq.get(record.destinationId);
    if (!order || !lookup) {
      order = [];
      lookup = new Map();
      seqs.set(record.destinationId, order);
      bySeq.set(record.destinationId, lookup);
    }
    // Records arrive in seq order almost always; a binary search covers replays of old events.
    if (order.length === 0 || (order[order.length - 1] as number) < record.seq) order.push(record.seq);
    else order.splice(lowerBound(order, record.seq), 0, record.seq);
    lookup.set(record.seq, record);
    let keys = events.get(record.eventId);
    if (!keys) {
      keys = new Set();
      events.set(record.eventId, keys);
    }
    keys.add(record.destinationId);
    count(record.destinationId, record.state, 1);
  };

  const replace = (record: DeliveryRecord) => {
    const key = deliveryKey(record.eventId, record.destinationId);
    const existing = records.get(key);
    if (!existing) return insert(record);
    count(existing.destinationId, existing.state, -1);
    count(record.destinationId, record.state, 1);
    records.set(key, record);
    bySeq.get(record.destinationId)?.set(record.seq, record);
  };

  const remove = (record: DeliveryRecord) => {
    records.delete(deliveryKey(record.eventId, record.destinationId));
    const order = seqs.get(record.destinationId);
    if (order) {
      const at = lowerBound(order, record.seq);
      if (order[at] === record.seq) order.splice(at, 1);
    }
    bySeq.get(record.destinationId)?.delete(record.seq);
    const keys = events.get(record.eventId);
    keys?.delete(record.destinationId);
    if (keys?.size === 0) events.delete(record.eventId);
    count(record.destinationId, record.state, -1);
  };

  const index: OutboxIndex = {
    cursor: 0,
    create(list, cursor) {
      const inserted: DeliveryRecord[] = [];
      for (const record of list) {
        if (records.has(deliveryKey(record.eventId, record.destinationId))) continue;
        const copy = copyDelivery(record);
        insert(copy);
        inserted.push(copyDelivery(copy));
      }
      index.cursor = Math.max(index.cursor, cursor);
      return inserted;
    },
    save(list) {
      for (const record of list) replace(copyDelivery(record));
    },
    get(eventId, destinationId) {
      const record = records.get(deliveryKey(eventId, destinationId));
      return record && copyDelivery(record);
    },
    byEvent(eventId) {
      return [...(events.get(eventId) ?? [])]
        .sort()
        .map((destinationId) => copyDelivery(records.get(deliveryKey(eventId, destinationId)) as DeliveryRecord));
    },
    list(query) {
      const order = seqs.get(query.destinationId) ?? [];
      const lookup = bySeq.get(query.destinationId);
      const states = query.states ? new Set(query.states) : undefined;
      const out: DeliveryRecord[] = [];
      let i = query.after === undefined ? order.length - 1 : lowerBound(order, query.after) - 1;
      for (; i >= 0; i--) {
        const record = lookup?.get(order[i] as number);
        if (!record) continue;
        if (states && !states.has(record.state)) continue;
        if (query.from !== undefined && record.receivedAt < query.from) continue;
        if (query.to !== undefined && record.receivedAt >= query.to) continue;
        if (out.length === query.limit) return { deliveries: out, next: out[out.length - 1]?.seq ?? null };
        out.push(copyDelivery(record));
      }
      return { deliveries: out, next: null };
    },
    active() {
      const out: DeliveryRecord[] = [];
      for (const record of records.values()) if (!isTerminal(record.state)) out.push(copyDelivery(record));
      return out.sort((a, b) => a.seq - b.seq || (a.destinationId < b.destinationId ? -1 : 1));
    },
    counts() {
      const out: Record<string, Partial<Record<DeliveryState, number>>> = {};
      for (const [destinationId, perState] of Object.entries(counts)) {
        out[destinationId] = Object.fromEntries(Object.entries(perState).filter(([, n]) => (n ?? 0) > 0));
      }
      return out;
    },
    destinationStates: new Map(),
    purge(before) {
      const gone: DeliveryRecord[] = [];
      for (const record of records.values()) {
        if (isTerminal(record.state) && record.updatedAt < before) gone.push(record);
      }
      for (const record of gone) remove(record);
      return gone;
    },
    remove(eventId, destinationId) {
      const record = records.get(deliveryKey(eventId, destinationId));
      if (record) remove(record);
    },
    all: () => records.values(),
    size: () => records.size,
  };
  return index;
}

/** First index whose value is >= `value` in an ascending array. */
function lowerBound(values: readonly number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The read side of an outbox store, answered from its index (the same for every memory driver). */
export function readFromIndex(
  index: OutboxIndex,
): Pick<
  OutboxStore,
  "getDelivery" | "listByEvent" | "listDeliveries" | "listActive" | "countByState" | "listDestinationStates"
> {
  return {
    async getDelivery(eventId, destinationId) {
      return index.get(eventId, destinationId);
    },
    async listByEvent(eventId) {
      return index.byEvent(eventId);
    },
    async listDeliveries(query) {
      return index.list(query);
    },
    async listActive() {
      return index.active();
    },
    async countByState() {
      return index.counts();
    },
    async listDestinationStates() {
      return [...index.destinationStates.values()].map((s) => ({ ...s }));
    },
  };
}
