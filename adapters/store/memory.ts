/**
 * The memory store driver: everything in process memory, nothing durable. For tests and for
 * trying the gateway out; a restart forgets every event.
 */
import type { ClaimResult, EventRecord, StoreDriver, StoreFactory, StoreWiring } from "../../src/store/contract.ts";
import { StoreUnavailableError } from "../../src/store/contract.ts";
import {
  createEventSummarizer,
  type EventSummary,
  pageSummaries,
  summariesAfter,
} from "../../src/store/match-event-query.ts";

export interface MemoryStoreOptions extends StoreWiring {
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
}

interface Mark {
  /** Event id once recorded; undefined while only claimed. */
  id?: string;
  expiresAt: number;
}

/** The memory store driver; `failWrites` lets tests simulate an unavailable store. */
export const memoryStore = ((options: MemoryStoreOptions = {}): StoreDriver & { failWrites: boolean } => {
  const now = options.now ?? Date.now;
  const summarizeEvent = createEventSummarizer(options.services);
  const marks = new Map<string, Mark>();
  const byId = new Map<string, EventRecord>();
  let ordered: EventSummary[] = [];
  const kv = new Map<string, { value: string; expiresAt: number }>();
  let seq = 0;
  let closed = false;

  const liveKv = (key: string) => {
    const entry = kv.get(key);
    if (entry && entry.expiresAt <= now()) {
      kv.delete(key);
      return undefined;
    }
    return entry;
  };

  const store = {
    name: "memory",
    failWrites: false,
    async claim(key: string, ttlMs: number): Promise<ClaimResult> {
      const mark = marks.get(key);
      const t = now();
      if (mark && mark.expiresAt > t) {
        return mark.id ? { status: "duplicate", id: mark.id } : { status: "in_progress" };
      }
      marks.set(key, { expiresAt: t + ttlMs });
      return { status: "claimed" };
    },
    async append(record: EventRecord, key: string, dedupeTtlMs: number) {
      if (store.failWrites) throw new StoreUnavailableError("memory store: writes disabled");
      if (closed) throw new StoreUnavailableError("memory store is closed");
      const existing = byId.get(record.id);
      marks.set(key, { id: record.id, expiresAt: now() + dedupeTtlMs });
      if (existing) return { inserted: false, seq: existing.seq };
      const stored = { ...record, seq: ++seq };
      byId.set(stored.id, stored);
      ordered.push(summarizeEvent(stored));
      return { inserted: true, seq: stored.seq };
    },
    async release(key: string) {
      if (!marks.get(key)?.id) marks.delete(key);
    },
    async get(id: string) {
      return byId.get(id);
    },
    async list(query: Parameters<StoreDriver["list"]>[0]) {
      const { page, next } = pageSummaries(ordered, query);
      return { events: page.map((s) => byId.get(s.id) as EventRecord), next };
    },
    async readAfter(afterSeq: number, limit: number, filter?: Parameters<StoreDriver["readAfter"]>[2]) {
      return summariesAfter(ordered, afterSeq, limit, filter).map((s) => byId.get(s.id) as EventRecord);
    },
    async lastSeq() {
      return seq;
    },
    async purge(before: number) {
      const t = now();
      const kept = ordered.filter((r) => r.receivedAt >= before);
      const removed = ordered.length - kept.length;
      for (const r of ordered) if (r.receivedAt < before) byId.delete(r.id);
      ordered = kept;
      for (const [key, mark] of marks) if (mark.expiresAt <= t) marks.delete(key);
      return removed;
    },
    async removeEvents(ids: readonly string[]) {
      const gone = new Set(ids.filter((id) => byId.delete(id)));
      if (gone.size > 0) ordered = ordered.filter((s) => !gone.has(s.id));
      return gone.size;
    },
    async redactEvents(records: readonly EventRecord[]) {
      let replaced = 0;
      for (const record of records) {
        const existing = byId.get(record.id);
        if (!existing) continue;
        const stored = { ...record, seq: existing.seq };
        byId.set(stored.id, stored);
        const at = ordered.findIndex((s) => s.id === stored.id);
        if (at >= 0) ordered[at] = summarizeEvent(stored);
        replaced++;
      }
      return replaced;
    },
    async ping() {
      if (store.failWrites) throw new StoreUnavailableError("memory store: unavailable");
    },
    async kvGet(key: string) {
      return liveKv(key)?.value;
    },
    async kvSet(key: string, value: string, ttlMs: number) {
      kv.set(key, { value, expiresAt: now() + ttlMs });
    },
    async kvSetIfAbsent(key: string, value: string, ttlMs: number) {
      if (liveKv(key)) return false;
      kv.set(key, { value, expiresAt: now() + ttlMs });
      return true;
    },
    async kvDelete(key: string) {
      kv.delete(key);
    },
    async close() {
      closed = true;
    },
  };
  return store;
}) satisfies StoreFactory<MemoryStoreOptions>;
