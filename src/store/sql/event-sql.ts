/**
 * SQL of the event log, dedupe marks and small shared values (the `StoreDriver` side of the
 * SQLite schema in `schema.ts`), plus the translation of an `EventQuery` into one indexed
 * SELECT. Runtime-agnostic: statements are strings with `?` parameters, for better-sqlite3 on
 * Node and `ctx.storage.sql.exec` on a Durable Object alike.
 *
 * The filter semantics are those of `match-event-query.ts` (the memory driver's): the columns
 * `type`, `subject` and `external_id` hold the fields of an `EventSummary` (the external id as
 * the driver's `createEventSummarizer` reads it, with the services it was handed), and a type glob becomes
 * a SQLite GLOB with everything but `*` escaped. A content filter (src/filters) becomes
 * `json_type` / `json_extract` terms over the `record` column (filter-to-sql.ts).
 */
import { translateFilterToSql } from "../../filters/filter-to-sql.ts";
import type { EventQuery, EventRecord } from "../contract.ts";

export const EVENT_SQL = {
  /** Changes nothing (0 rows) when the id is already recorded. */
  insert: `INSERT INTO events (seq, id, source_id, type, subject, external_id, received_at, record)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  seqOfId: "SELECT seq FROM events WHERE id = ?",
  getById: "SELECT seq, record FROM events WHERE id = ?",
  maxSeq: "SELECT coalesce(max(seq), 0) AS seq FROM events",
  /** One retention batch: parameters `before`, `limit`. */
  purgeBatch: `DELETE FROM events WHERE seq IN
    (SELECT seq FROM events WHERE received_at < ? ORDER BY received_at LIMIT ?)`,
  /** Parameter `id`. */
  removeById: "DELETE FROM events WHERE id = ?",
  /** Parameters `type`, `subject`, `external_id`, `record`, `id` (see `eventRedactParams`). */
  redactById: "UPDATE events SET type = ?, subject = ?, external_id = ?, record = ? WHERE id = ?",
  markOf: "SELECT event_id, expires_at FROM marks WHERE key = ?",
  upsertMark: `INSERT INTO marks (key, event_id, expires_at) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET event_id = excluded.event_id, expires_at = excluded.expires_at`,
  /** Parameters `now`, `limit`. */
  purgeMarksBatch: `DELETE FROM marks WHERE key IN
    (SELECT key FROM marks WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
  kvGet: "SELECT value FROM kv WHERE key = ? AND expires_at > ?",
  kvSet: `INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
  /** Parameters `key`, `value`, `expiresAt`, `now`: changes 1 only when the key was absent or expired. */
  kvSetIfAbsent: `INSERT INTO kv (key, value, expires_at) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
    WHERE kv.expires_at <= ?`,
  kvDelete: "DELETE FROM kv WHERE key = ?",
  /** Parameters `now`, `limit`. */
  purgeKvBatch: `DELETE FROM kv WHERE key IN
    (SELECT key FROM kv WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
} as const;

/** A row of `events` as selected by the statements here. */
export interface EventRow {
  seq: number;
  record: string;
}

/**
 * The parameters of `EVENT_SQL.insert` for a record at `seq` (default: the record's own), with
 * the external id its driver's summarizer read (`SummarizeEvent`, match-event-query.ts).
 */
export function eventInsertParams(record: EventRecord, externalId: string | undefined, seq = record.seq): unknown[] {
  const { seq: _seq, ...rest } = record;
  return [
    seq,
    record.id,
    record.sourceId,
    record.event.type,
    record.event.subject ?? null,
    externalId ?? null,
    record.receivedAt,
    JSON.stringify(rest),
  ];
}

/** The parameters of `EVENT_SQL.redactById`: the replacement's columns, then its id. */
export function eventRedactParams(record: EventRecord, externalId: string | undefined): unknown[] {
  const [, id, , type, subject, , , json] = eventInsertParams(record, externalId);
  return [type, subject, externalId ?? null, json, id];
}

/** The record of a selected row. */
export function eventFromRow(row: EventRow): EventRecord {
  return { ...(JSON.parse(row.record) as Omit<EventRecord, "seq">), seq: row.seq };
}

/** An event-type glob (`agreement.*`) as a SQLite GLOB pattern: only `*` stays a wildcard. */
export function toSqlGlob(pattern: string): string {
  return pattern.replace(/[[?]/g, (c) => `[${c}]`);
}

export interface SqlQuery {
  sql: string;
  params: unknown[];
}

/** WHERE terms of the filter fields of a query (everything but cursor and limit). */
function filterTerms(filter: Omit<EventQuery, "after" | "limit">, terms: string[], params: unknown[]): void {
  if (filter.sourceId !== undefined) {
    terms.push("source_id = ?");
    params.push(filter.sourceId);
  }
  if (filter.type !== undefined && filter.type !== "*") {
    if (filter.type.includes("*")) {
      // `+type`: a glob usually matches much of the log, so walking seq backwards and filtering
      // beats collecting the whole range from the type index and sorting it.
      terms.push("+type GLOB ?");
      params.push(toSqlGlob(filter.type));
    } else {
      terms.push("type = ?");
      params.push(filter.type);
    }
  }
  if (filter.subject !== undefined) {
    terms.push("subject = ?");
    params.push(filter.subject);
  }
  if (filter.externalId !== undefined) {
    terms.push("external_id = ?");
    params.push(filter.externalId);
  }
  // `from` alone (the event log API always bounds it by retention) stays off the receive-time
  // index: walking seq backwards meets recent events first. A window with `to` may use it.
  if (filter.from !== undefined) {
    terms.push(filter.to === undefined ? "+received_at >= ?" : "received_at >= ?");
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    terms.push("received_at < ?");
    params.push(filter.to);
  }
  if (filter.filter !== undefined) {
    // A superset when the translation is inexact; list-matching.ts finishes it in memory.
    const translated = translateFilterToSql(filter.filter);
    terms.push(translated.sql);
    params.push(...translated.params);
  }
}

/**
 * One page of `list`, newest first. Selects `limit + 1` rows: the extra row only tells whether
 * a next page exists, which keeps `next` exact. `upTo` (inclusive) hides events committed but
 * not yet durable, when the driver acknowledges after its own sync.
 */
export function buildListQuery(query: EventQuery, upTo?: number): SqlQuery {
  const terms: string[] = [];
  const params: unknown[] = [];
  filterTerms(query, terms, params);
  const bounds = [query.after, upTo === undefined ? undefined : upTo + 1].filter((b) => b !== undefined);
  if (bounds.length > 0) {
    terms.push("seq < ?");
    params.push(Math.min(...bounds));
  }
  if (query.minSeq !== undefined) {
    terms.push("seq >= ?");
    params.push(query.minSeq);
  }
  const where = terms.length > 0 ? `WHERE ${terms.join(" AND ")}` : "";
  params.push(query.limit + 1);
  return { sql: `SELECT seq, record FROM events ${where} ORDER BY seq DESC LIMIT ?`, params };
}

/** `readAfter`: events with seq > `afterSeq` (and <= `upTo`), ascending, filtered, at most `limit`. */
export function buildReadAfterQuery(
  afterSeq: number,
  limit: number,
  filter: Omit<EventQuery, "after" | "limit"> = {},
  upTo?: number,
): SqlQuery {
  const terms = upTo === undefined ? ["seq > ?"] : ["seq > ?", "seq <= ?"];
  const params: unknown[] = upTo === undefined ? [afterSeq] : [afterSeq, upTo];
  filterTerms(filter, terms, params);
  params.push(limit);
  return { sql: `SELECT seq, record FROM events WHERE ${terms.join(" AND ")} ORDER BY seq ASC LIMIT ?`, params };
}
