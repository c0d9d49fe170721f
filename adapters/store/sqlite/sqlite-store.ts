/**
 * The event log, dedupe marks and small shared values on SQLite (the `StoreDriver` half of the
 * sqlite driver; the database is opened by open-database.ts and shared with the outbox).
 *
 * Memory holds only what is in flight: claims (an identity being recorded right now, short
 * TTL) and appends not yet committed. Everything recorded is in the database and read back
 * through its indexes, so memory does not grow with the log (README "Storage").
 *
 * Claims stay in memory on purpose: a claim protects one request for seconds, and one process
 * owns the database (the lock in open-database.ts), so a durable claim would cost a write per
 * request and protect nothing more. A claim turns into a mark in the same transaction as its
 * event and is dropped only once that transaction is durable (group-commit.ts); until then a
 * retry is answered "in progress", never "duplicate" of an event a power cut could still take.
 * For the same reason reads by seq (list, readAfter, get) stop at the highest durable seq: the
 * router and the live stream never act on an event that is not durable yet.
 */
import type { Database, Statement } from "better-sqlite3";
import type { AppendResult, ClaimResult, EventRecord, StoreDriver } from "../../../src/store/contract.ts";
import { StoreUnavailableError } from "../../../src/store/contract.ts";
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
import type { GroupCommit } from "./group-commit.ts";

export interface SqliteStoreParts {
  db: Database;
  writer: GroupCommit;
  now: () => number;
  /** Rows deleted per retention transaction (each is one short write between appends). */
  purgeBatchSize: number;
  /** Copies the WAL into the database and truncates it (after an erasure). */
  checkpoint?: () => void;
  /** Gives the store's share of the database back (the outbox may still use it). */
  release(): Promise<void>;
}

/** Builds the store on an open database. */
export function createSqliteStoreDriver(parts: SqliteStoreParts): StoreDriver {
  const { db, writer, now, purgeBatchSize } = parts;
  const statements = new Map<string, Statement>();
  /** Prepared once per SQL text (queries with different filters have different texts). */
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
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

  const ensureOpen = () => {
    if (closing) throw new StoreUnavailableError("sqlite store is closed");
  };

  const recordedMark = (key: string, t: number) => {
    const mark = prepare(EVENT_SQL.markOf).get(key) as { event_id: string; expires_at: number } | undefined;
    return mark && mark.expires_at > t ? mark.event_id : undefined;
  };

  const toRecords = (rows: EventRow[]) => rows.map(eventFromRow);

  /** Deletes in batches of `purgeBatchSize`, one transaction each, until a batch comes back short. */
  const purgeInBatches = async (sql: string, cutoff: number, afterBatch?: () => void): Promise<number> => {
    let removed = 0;
    for (let batches = 0; batches < 1_000_000; batches++) {
      const changes = await writer.run(() => {
        const count = prepare(sql).run(cutoff, purgeBatchSize).changes;
        afterBatch?.();
        return count;
      });
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
      const existing = prepare(EVENT_SQL.seqOfId).get(record.id) as { seq: number } | undefined;
      let promise: Promise<AppendResult>;
      if (existing) {
        // Already recorded (a retry or a lost race): only the mark is renewed, durably.
        promise = writer
          .run(
            () => prepare(EVENT_SQL.upsertMark).run(key, record.id, expiresAt),
            () => claims.delete(key),
          )
          .then(() => ({ inserted: false, seq: existing.seq }));
      } else {
        assignedSeq = Math.max(assignedSeq, durableSeq) + 1;
        const stored: EventRecord = { ...record, seq: assignedSeq };
        const params = eventInsertParams(stored);
        promise = writer
          .run(
            () => {
              prepare(EVENT_SQL.insert).run(params);
              prepare(EVENT_SQL.upsertMark).run(key, stored.id, expiresAt);
            },
            () => {
              durableSeq = Math.max(durableSeq, stored.seq);
              claims.delete(key);
            },
          )
          .then(() => ({ inserted: true, seq: stored.seq }));
      }
      promise = promise.finally(() => inflight.delete(record.id));
      inflight.set(record.id, promise);
      return promise;
    },
    async release(key) {
      claims.delete(key);
    },
    async get(id) {
      ensureOpen();
      const row = prepare(EVENT_SQL.getById).get(id) as EventRow | undefined;
      return row && row.seq <= durableSeq ? eventFromRow(row) : undefined;
    },
    filterPushdown: true,
    async list(query) {
      ensureOpen();
      const { sql, params } = buildListQuery(query, durableSeq);
      // A content filter makes the statement text unique to it: not kept in the statement cache.
      const rows = (query.filter ? db.prepare(sql) : prepare(sql)).all(params) as EventRow[];
      const more = rows.length > query.limit;
      const events = toRecords(more ? rows.slice(0, query.limit) : rows);
      return { events, next: more ? (events[events.length - 1] as EventRecord).seq : null };
    },
    async readAfter(afterSeq, limit, filter) {
      ensureOpen();
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
      const removed = await purgeInBatches(EVENT_SQL.purgeBatch, before, () =>
        prepare(META_SQL.raise).run(META.seqFloor, durableSeq),
      );
      await purgeInBatches(EVENT_SQL.purgeMarksBatch, t);
      await purgeInBatches(EVENT_SQL.purgeKvBatch, t);
      return removed;
    },
    async removeEvents(ids) {
      ensureOpen();
      if (ids.length === 0) return 0;
      return writer.run(() => {
        let removed = 0;
        for (const id of ids) removed += prepare(EVENT_SQL.removeById).run(id).changes;
        // seq never goes back, even when the newest event went.
        prepare(META_SQL.raise).run(META.seqFloor, durableSeq);
        return removed;
      });
    },
    async redactEvents(records) {
      ensureOpen();
      if (records.length === 0) return 0;
      return writer.run(() => {
        let n = 0;
        for (const record of records) n += prepare(EVENT_SQL.redactById).run(eventRedactParams(record)).changes;
        return n;
      });
    },
    async compact() {
      ensureOpen();
      // secure_delete (open-database.ts) zeroed the old content in the database pages; the WAL
      // may still hold frames written before the change, so it is checkpointed and cut back.
      parts.checkpoint?.();
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
      await writer.run(() => prepare(EVENT_SQL.kvSet).run(key, value, expiresAt));
    },
    async kvSetIfAbsent(key, value, ttlMs) {
      ensureOpen();
      const t = now();
      // Decided inside the transaction, in call order: of concurrent takers exactly one wins.
      return writer.run(() => prepare(EVENT_SQL.kvSetIfAbsent).run(key, value, t + ttlMs, t).changes === 1);
    },
    async kvDelete(key) {
      ensureOpen();
      await writer.run(() => prepare(EVENT_SQL.kvDelete).run(key));
    },
    close() {
      closing ??= parts.release();
      return closing;
    },
  };
}
