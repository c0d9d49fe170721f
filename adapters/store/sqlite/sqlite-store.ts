/**
 * The event log, dedupe marks and small shared values on SQLite (the `StoreDriver` half of the
 * sqlite driver; the database is opened by open-database.ts and shared with the outbox).
 *
 * Memory holds only what is in flight: claims (an identity being recorded right now, short
 * TTL) and appends not yet committed. Everything recorded is in the database and read back
 * through its indexes, so memory does not grow with the log (docs/storage.md#the-sqlite-store).
 *
 * Claims stay in memory on purpose: a claim protects one request for seconds, and one process
 * owns the database (the lock in open-database.ts), so a durable claim would cost a write per
 * request and protect nothing more. A claim turns into a mark in the same transaction as its
 * event and is dropped only once that transaction is durable (group-commit.ts); until then a
 * retry is answered "in progress", never "duplicate" of an event a power cut could still take.
 * For the same reason reads by seq (list, readAfter, get) stop at the highest durable seq: the
 * router and the live stream never act on an event that is not durable yet.
 *
 * The last `RECENT_EVENTS` events appended here stay in memory once durable, so the router and
 * live-stream resumes, which read right behind the ingress, take them from there instead of
 * reading back (and parsing) each event they were just handed; so does `get`, which each
 * delivery attempt calls right behind the router (one SQLite read and JSON parse per attempt).
 * Only while something reads the log (`readAfter` or `get` within `READER_IDLE_MS`): an event
 * kept in memory outlives the young generation of the garbage collector and is copied by it
 * (twice, then promoted), which cost more main-thread CPU per webhook than anything else the
 * store does when nothing reads it back (a gateway without routes, BENCHMARKS.md).
 */
import type { Database } from "better-sqlite3";
import type { AppendResult, ClaimResult, EventRecord, StoreDriver } from "../../../src/store/contract.ts";
import { StoreUnavailableError } from "../../../src/store/contract.ts";
import type { SummarizeEvent } from "../../../src/store/match-event-query.ts";
import {
  buildListQuery,
  buildReadAfterQuery,
  EVENT_SQL,
  type EventRow,
  eventFromRow,
  eventInsertParams,
  eventRedactParams,
} from "../../../src/store/sql/event-sql.ts";
import { META, META_SQL } from "../../../src/store/sql/schema.ts";
import type { GroupCommit, WriteStatement } from "./group-commit.ts";
import { createMarkFilter } from "./mark-filter.ts";
import { statementOn } from "./retained-statements.ts";

export interface SqliteStoreParts {
  db: Database;
  writer: GroupCommit;
  now: () => number;
  /** Reads the indexed fields of an event (its external id, with the services the store was handed). */
  summarizeEvent: SummarizeEvent;
  /** Rows deleted per retention transaction (each is one short write between appends). */
  purgeBatchSize: number;
  /** Copies the WAL into the database and truncates it (after an erasure). */
  checkpoint?: () => Promise<void>;
  /** Gives the store's share of the database back (the outbox may still use it). */
  release(): Promise<void>;
}

/** Durable events kept in memory for `readAfter` right behind the ingress. */
const RECENT_EVENTS = 2048;
/** Appends are kept in memory while a read of the log (`readAfter`, `get`) came at most this long ago. */
const READER_IDLE_MS = 60_000;

/** Builds the store on an open database. */
export function createSqliteStoreDriver(parts: SqliteStoreParts): StoreDriver {
  const { db, writer, now, purgeBatchSize, summarizeEvent } = parts;
  /** Prepared once per SQL text and kept (retained-statements.ts: never garbage collected). */
  const prepare = (sql: string) => statementOn(db, sql);
  const claims = new Map<string, number>();
  const inflight = new Map<string, Promise<AppendResult>>();
  const readLastSeq = () =>
    Math.max(
      (prepare(EVENT_SQL.maxSeq).get() as { seq: number }).seq,
      (prepare(META_SQL.get).get(META.seqFloor) as { value: number } | undefined)?.value ?? 0,
    );
  /** Highest committed seq, and highest handed out (failed appends skip theirs). */
  let durableSeq = readLastSeq();
  let assignedSeq = durableSeq;
  let closing: Promise<void> | undefined;
  /**
   * Every event appended since `recentFrom`, in seq order (all durable): together they are
   * exactly the events with seq >= `recentFrom`, until retention removes some (then reset).
   */
  let recent: EventRecord[] = [];
  let recentFrom = durableSeq + 1;
  /** The same events by id (`get`). */
  const recentById = new Map<string, EventRecord>();
  /** When `readAfter` or `get` last ran: appends are kept in memory only while something reads. */
  let readerSeenAt = Number.NEGATIVE_INFINITY;
  /** Keeps the durable event `record` at `seq` in memory, or forgets memory when nobody reads. */
  const remember = (appended: EventRecord, seq: number) => {
    if (now() - readerSeenAt > READER_IDLE_MS) {
      // Still exactly the events from `recentFrom` on: none.
      if (recent.length > 0) {
        recent = [];
        recentById.clear();
      }
      recentFrom = seq + 1;
      return;
    }
    const record = { ...appended, seq };
    recent.push(record);
    recentById.set(record.id, record);
    if (recent.length > 2 * RECENT_EVENTS) {
      const dropped = recent.length - RECENT_EVENTS;
      for (let i = 0; i < dropped; i++) recentById.delete((recent[i] as EventRecord).id);
      recent = recent.slice(dropped);
      recentFrom = (recent[0] as EventRecord).seq;
    }
  };
  /** Empties memory after events were removed or changed: reads go to the database until new appends. */
  const forgetRecent = () => {
    recent = [];
    recentById.clear();
    recentFrom = assignedSeq + 1;
  };
  /** `readAfter` served from memory, or undefined when memory does not hold the whole range. */
  const readRecent = (afterSeq: number, limit: number): EventRecord[] | undefined => {
    if (afterSeq + 1 < recentFrom) return undefined;
    let start = recent.length;
    while (start > 0 && (recent[start - 1] as EventRecord).seq > afterSeq) start--;
    return recent.slice(start, start + limit);
  };

  const ensureOpen = () => {
    if (closing) throw new StoreUnavailableError("sqlite store is closed");
  };

  // Nearly every claim is of an identity never seen: answered from memory (mark-filter.ts).
  const marked = createMarkFilter();
  marked.fill(db, () => closing !== undefined).catch(() => {});
  const recordedMark = (key: string, t: number) => {
    if (!marked.mightHave(key)) return undefined;
    const mark = prepare(EVENT_SQL.markOf).get(key) as { event_id: string; expires_at: number } | undefined;
    return mark && mark.expires_at > t ? mark.event_id : undefined;
  };

  const toRecords = (rows: EventRow[]) => rows.map(eventFromRow);

  /** Deletes in batches of `purgeBatchSize`, one transaction each, until a batch comes back short. */
  const purgeInBatches = async (sql: string, cutoff: number, afterBatch?: () => WriteStatement): Promise<number> => {
    let removed = 0;
    for (let batches = 0; batches < 1_000_000; batches++) {
      const batch: WriteStatement[] = [[sql, [cutoff, purgeBatchSize]]];
      if (afterBatch) batch.push(afterBatch());
      const [changes = 0] = await writer.run(batch);
      removed += changes;
      if (changes < purgeBatchSize) break;
    }
    return removed;
  };

  return {
    name: "sqlite",
    async claim(key, ttlMs): Promise<ClaimResult> {
      ensureOpen();
      const t = now();
      const claimedUntil = claims.get(key);
      if (claimedUntil !== undefined && claimedUntil > t) return { status: "in_progress" };
      const id = recordedMark(key, t);
      if (id) return { status: "duplicate", id };
      claims.set(key, t + ttlMs);
      return { status: "claimed" };
    },
    append(record, key, dedupeTtlMs) {
      if (closing) return Promise.reject(new StoreUnavailableError("sqlite store is closed"));
      const expiresAt = now() + dedupeTtlMs;
      const running = inflight.get(record.id);
      if (running) return running.then((r) => ({ inserted: false, seq: r.seq }));
      // No read before the write: the insert is skipped when the id is recorded (a retry or a
      // lost race), and only then is its seq looked up. The mark is renewed either way, durably.
      assignedSeq = Math.max(assignedSeq, durableSeq) + 1;
      const seq = assignedSeq;
      marked.add(key);
      let promise = writer
        .run(
          [
            [EVENT_SQL.insert, eventInsertParams(record, summarizeEvent(record).externalId, seq)],
            [EVENT_SQL.upsertMark, [key, record.id, expiresAt]],
          ],
          ([inserted]) => {
            if (inserted === 1) {
              durableSeq = Math.max(durableSeq, seq);
              remember(record, seq);
            }
            claims.delete(key);
          },
        )
        .then(([inserted]): AppendResult => {
          if (inserted === 1) return { inserted: true, seq };
          const existing = prepare(EVENT_SQL.seqOfId).get(record.id) as { seq: number };
          return { inserted: false, seq: existing.seq };
        });
      promise = promise.finally(() => inflight.delete(record.id));
      inflight.set(record.id, promise);
      return promise;
    },
    async release(key) {
      claims.delete(key);
    },
    async get(id) {
      ensureOpen();
      readerSeenAt = now();
      const held = recentById.get(id);
      if (held) return held;
      const row = prepare(EVENT_SQL.getById).get(id) as EventRow | undefined;
      return row && row.seq <= durableSeq ? eventFromRow(row) : undefined;
    },
    filterPushdown: true,
    async list(query) {
      ensureOpen();
      const { sql, params } = buildListQuery(query, durableSeq);
      // Kept per text: a content filter's values are parameters, so its text is one per filter shape.
      const rows = prepare(sql).all(params) as EventRow[];
      const more = rows.length > query.limit;
      const events = toRecords(more ? rows.slice(0, query.limit) : rows);
      return { events, next: more ? (events[events.length - 1] as EventRecord).seq : null };
    },
    async readAfter(afterSeq, limit, filter) {
      ensureOpen();
      readerSeenAt = now();
      const fromMemory =
        filter === undefined || Object.keys(filter).length === 0 ? readRecent(afterSeq, limit) : undefined;
      if (fromMemory) return fromMemory;
      const { sql, params } = buildReadAfterQuery(afterSeq, limit, filter, durableSeq);
      return toRecords(prepare(sql).all(params) as EventRow[]);
    },
    async lastSeq() {
      return durableSeq;
    },
    async purge(before) {
      ensureOpen();
      const t = now();
      for (const [key, until] of claims) if (until <= t) claims.delete(key);
      // The floor is raised in each batch's transaction: seq never goes back, even when the
      // batch removed the newest event.
      const removed = await purgeInBatches(EVENT_SQL.purgeBatch, before, () => [
        META_SQL.raise,
        [META.seqFloor, durableSeq],
      ]);
      if (removed > 0) forgetRecent();
      await purgeInBatches(EVENT_SQL.purgeMarksBatch, t);
      await purgeInBatches(EVENT_SQL.purgeKvBatch, t);
      return removed;
    },
    async removeEvents(ids) {
      ensureOpen();
      if (ids.length === 0) return 0;
      const changes = await writer.run(
        [
          ...ids.map((id): WriteStatement => [EVENT_SQL.removeById, [id]]),
          // seq never goes back, even when the newest event went.
          [META_SQL.raise, [META.seqFloor, durableSeq]],
        ],
        forgetRecent,
      );
      return changes.slice(0, ids.length).reduce((sum, n) => sum + n, 0);
    },
    async redactEvents(records) {
      ensureOpen();
      if (records.length === 0) return 0;
      // The events kept in memory still carry what is erased: forgotten as the erasure becomes
      // durable, before anything (a delivery attempt's `get`) can run after it.
      const changes = await writer.run(
        records.map(
          (record): WriteStatement => [
            EVENT_SQL.redactById,
            eventRedactParams(record, summarizeEvent(record).externalId),
          ],
        ),
        forgetRecent,
      );
      return changes.reduce((sum, n) => sum + n, 0);
    },
    async compact() {
      ensureOpen();
      // secure_delete (open-database.ts) zeroed the old content in the database pages; the WAL
      // may still hold frames written before the change, so it is checkpointed and cut back.
      await parts.checkpoint?.();
    },
    async ping() {
      ensureOpen();
      if (!writer.healthy) throw new StoreUnavailableError("a sync of the sqlite WAL failed; restart the gateway");
      prepare(META_SQL.get).get(META.schemaVersion);
    },
    async kvGet(key) {
      ensureOpen();
      return (prepare(EVENT_SQL.kvGet).get(key, now()) as { value: string } | undefined)?.value;
    },
    async kvSet(key, value, ttlMs) {
      ensureOpen();
      const expiresAt = now() + ttlMs;
      await writer.run([[EVENT_SQL.kvSet, [key, value, expiresAt]]]);
    },
    async kvSetIfAbsent(key, value, ttlMs) {
      ensureOpen();
      const t = now();
      // Decided inside the transaction, in call order: of concurrent takers exactly one wins.
      const [changes] = await writer.run([[EVENT_SQL.kvSetIfAbsent, [key, value, t + ttlMs, t]]]);
      return changes === 1;
    },
    async kvDelete(key) {
      ensureOpen();
      await writer.run([[EVENT_SQL.kvDelete, [key]]]);
    },
    close() {
      closing ??= parts.release();
      return closing;
    },
  };
}
