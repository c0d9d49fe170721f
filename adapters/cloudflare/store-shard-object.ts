/**
 * One shard of the gateway's store on Workers: a SQLite-backed Durable Object holding the events,
 * dedupe marks and kv entries placed on it (shard-placement.ts), with the schema and statements
 * of the embedded SQLite store (src/store/sql/). Each RPC method runs its SQL synchronously, so
 * it is one atomic step of this single-threaded object; the runtime's output gate holds the
 * caller's answer until the writes are durable, which makes `append` "durable before the 2xx".
 *
 * Claims in flight live in memory, as in the Node SQLite driver: losing them (the object
 * restarted) only lets a concurrent copy claim as well, and `append` is idempotent on the event
 * id, so the log still holds one event.
 */
import { DurableObject } from "cloudflare:workers";
import type { AppendResult, ClaimResult, EventQuery, EventRecord } from "../../src/store/contract.ts";
import {
  buildListQuery,
  buildReadAfterQuery,
  EVENT_SQL,
  type EventRow,
  eventFromRow,
  eventInsertParams,
  eventRedactParams,
} from "../../src/store/sql/event-sql.ts";
import { META_SQL } from "../../src/store/sql/schema.ts";
import type { DurableObjectState } from "./cloudflare-types.ts";
import { prepareDurableStorage } from "./migrate-durable-storage.ts";
import { lastSeqOfTick, nextSeq, type ShardPlace } from "./shard-placement.ts";

/** Rows removed per retention statement: keeps each step short. */
const PURGE_BATCH = 500;
/** `meta` keys of this object: highest assigned seq and the highest sealed tick. */
const SEQ_FLOOR = "seq_floor";
const SEALED_TICK = "sealed_tick";
const COUNT_BEFORE = "SELECT count(*) AS n FROM events WHERE received_at < ?";

/** An event as a shard stores it: the record and the external id the driver read from it. */
export interface IndexedRecord {
  record: EventRecord;
  externalId: string | undefined;
}

/** A page of one shard: up to `limit + 1` rows, newest first (the driver merges shards). */
export interface ShardPage {
  events: EventRecord[];
}

export class StoreShardObject extends DurableObject {
  private readonly claims = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    prepareDurableStorage(ctx.storage, "the store shard's Durable Object storage");
  }

  private meta(key: string): number {
    const row = this.ctx.storage.sql.exec<{ value: number }>(META_SQL.get, key).toArray()[0];
    return row ? row.value : 0;
  }

  claim(dedupeKey: string, claimTtlMs: number, now: number): ClaimResult {
    const mark = this.ctx.storage.sql
      .exec<{ event_id: string; expires_at: number }>(EVENT_SQL.markOf, dedupeKey)
      .toArray()[0];
    if (mark && mark.expires_at > now) return { status: "duplicate", id: mark.event_id };
    const claimed = this.claims.get(dedupeKey);
    if (claimed !== undefined && claimed > now) return { status: "in_progress" };
    this.claims.set(dedupeKey, now + claimTtlMs);
    return { status: "claimed" };
  }

  /** Appends (idempotent on the id) and marks the identity recorded, in one transaction. */
  append(
    { record, externalId }: IndexedRecord,
    dedupeKey: string,
    dedupeTtlMs: number,
    now: number,
    floor: number,
    place: ShardPlace,
  ): AppendResult {
    const sql = this.ctx.storage.sql;
    this.claims.delete(dedupeKey);
    return this.ctx.storage.transactionSync(() => {
      sql.exec(EVENT_SQL.upsertMark, dedupeKey, record.id, now + dedupeTtlMs);
      const existing = sql.exec<{ seq: number }>(EVENT_SQL.seqOfId, record.id).toArray()[0];
      if (existing) return { inserted: false, seq: existing.seq };
      const last = Math.max(this.meta(SEQ_FLOOR), lastSeqOfTick(this.meta(SEALED_TICK), place.count));
      const seq = nextSeq(place, last, floor, now);
      sql.exec(EVENT_SQL.insert, ...eventInsertParams(record, externalId, seq));
      sql.exec(META_SQL.raise, SEQ_FLOOR, seq);
      return { inserted: true, seq };
    });
  }

  release(dedupeKey: string): void {
    this.claims.delete(dedupeKey);
  }

  get(id: string): EventRecord | undefined {
    const row = this.ctx.storage.sql.exec<EventRow>(EVENT_SQL.getById, id).toArray()[0];
    return row ? eventFromRow(row) : undefined;
  }

  /** Up to `limit + 1` matching events, newest first. */
  list(query: EventQuery): ShardPage {
    const { sql, params } = buildListQuery(query);
    return {
      events: this.ctx.storage.sql
        .exec<EventRow>(sql, ...params)
        .toArray()
        .map(eventFromRow),
    };
  }

  /**
   * Events after `afterSeq`, ascending. With `sealTick` set, first promises to number later
   * events above that tick, then reads only up to its end (shard-placement.ts).
   */
  readAfter(
    afterSeq: number,
    limit: number,
    filter: Omit<EventQuery, "after" | "limit"> | undefined,
    seal?: { tick: number; count: number },
  ): EventRecord[] {
    const sql = this.ctx.storage.sql;
    const query = buildReadAfterQuery(afterSeq, limit, filter);
    if (!seal)
      return sql
        .exec<EventRow>(query.sql, ...query.params)
        .toArray()
        .map(eventFromRow);
    sql.exec(META_SQL.raise, SEALED_TICK, seal.tick);
    const end = lastSeqOfTick(seal.tick, seal.count);
    return sql
      .exec<EventRow>(query.sql, ...query.params)
      .toArray()
      .map(eventFromRow)
      .filter((record) => record.seq <= end);
  }

  /** The highest seq this shard assigned (0 when none). */
  lastSeq(): number {
    return this.meta(SEQ_FLOOR);
  }

  /** Drops events received before `before`, expired marks, kv entries and claims. */
  purge(before: number, now: number): number {
    const sql = this.ctx.storage.sql;
    // rowsWritten also counts index writes, so the count comes from a SELECT in the same step.
    const removed = sql.exec<{ n: number }>(COUNT_BEFORE, before).one().n;
    while (sql.exec(EVENT_SQL.purgeBatch, before, PURGE_BATCH).rowsWritten > 0) {}
    while (sql.exec(EVENT_SQL.purgeMarksBatch, now, PURGE_BATCH).rowsWritten > 0) {}
    while (sql.exec(EVENT_SQL.purgeKvBatch, now, PURGE_BATCH).rowsWritten > 0) {}
    for (const [key, expiresAt] of this.claims) if (expiresAt <= now) this.claims.delete(key);
    return removed;
  }

  /** Removes the events with these ids held by this shard; returns how many went. */
  removeEvents(ids: readonly string[]): number {
    const sql = this.ctx.storage.sql;
    let removed = 0;
    for (const id of ids) {
      if (!sql.exec(EVENT_SQL.seqOfId, id).toArray()[0]) continue;
      sql.exec(EVENT_SQL.removeById, id);
      removed++;
    }
    return removed;
  }

  /** Replaces events of this shard in place by id (tombstones of erased events); returns how many. */
  redactEvents(records: readonly IndexedRecord[]): number {
    const sql = this.ctx.storage.sql;
    let replaced = 0;
    for (const { record, externalId } of records) {
      if (!sql.exec(EVENT_SQL.seqOfId, record.id).toArray()[0]) continue;
      sql.exec(EVENT_SQL.redactById, ...eventRedactParams(record, externalId));
      replaced++;
    }
    return replaced;
  }

  ping(): true {
    return true;
  }

  kvGet(key: string, now: number): string | undefined {
    return this.ctx.storage.sql.exec<{ value: string }>(EVENT_SQL.kvGet, key, now).toArray()[0]?.value;
  }

  kvSet(key: string, value: string, ttlMs: number, now: number): void {
    this.ctx.storage.sql.exec(EVENT_SQL.kvSet, key, value, now + ttlMs);
  }

  kvSetIfAbsent(key: string, value: string, ttlMs: number, now: number): boolean {
    return this.ctx.storage.sql.exec(EVENT_SQL.kvSetIfAbsent, key, value, now + ttlMs, now).rowsWritten > 0;
  }

  kvDelete(key: string): void {
    this.ctx.storage.sql.exec(EVENT_SQL.kvDelete, key);
  }
}
