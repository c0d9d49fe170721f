/**
 * The event-log reads of the `postgres` store: an `EventQuery` as one indexed SELECT in
 * PostgreSQL's dialect (the SQLite builder in src/store/sql/event-sql.ts uses GLOB and SQLite's
 * `+column` index hints, which PostgreSQL lacks), with the content filter pushed down as JSONB
 * (filter-to-jsonb.ts). Parameters are `?` placeholders, numbered by `toPg`.
 */
import type { EventQuery, EventRecord } from "../../../src/store/contract.ts";
import type { SummarizeEvent } from "../../../src/store/match-event-query.ts";
import type { SqlQuery } from "../../../src/store/sql/event-sql.ts";
import { translateFilterToJsonb } from "./filter-to-jsonb.ts";
import { pgText } from "./pg-connection.ts";

/** An event-type glob (`agreement.*`) as a LIKE pattern: only `*` stays a wildcard. */
export function toLikePattern(glob: string): string {
  return pgText(glob)
    .replace(/[\\%_]/g, (c) => `\\${c}`)
    .replace(/\*/g, "%");
}

function filterTerms(filter: Omit<EventQuery, "after" | "limit">, terms: string[], params: unknown[]): void {
  if (filter.sourceId !== undefined) {
    terms.push("source_id = ?");
    params.push(pgText(filter.sourceId));
  }
  if (filter.type !== undefined && filter.type !== "*") {
    if (filter.type.includes("*")) {
      terms.push("type LIKE ?");
      params.push(toLikePattern(filter.type));
    } else {
      terms.push("type = ?");
      params.push(pgText(filter.type));
    }
  }
  if (filter.subject !== undefined) {
    terms.push("subject = ?");
    params.push(pgText(filter.subject));
  }
  if (filter.externalId !== undefined) {
    terms.push("external_id = ?");
    params.push(pgText(filter.externalId));
  }
  if (filter.from !== undefined) {
    terms.push("received_at >= ?");
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    terms.push("received_at < ?");
    params.push(filter.to);
  }
  if (filter.filter !== undefined) {
    // A superset when inexact, and rows without a JSONB document always pass: the driver
    // finishes every filtered read in memory.
    const translated = translateFilterToJsonb(filter.filter);
    if (translated.exact) {
      terms.push(`(doc IS NULL OR ${translated.sql})`);
      params.push(...translated.params);
    }
  }
}

/** Up to `limit` rows newest first, seq below `before` (when given). */
export function buildPgListQuery(
  query: Omit<EventQuery, "limit" | "after">,
  before: number | undefined,
  limit: number,
): SqlQuery {
  const terms: string[] = [];
  const params: unknown[] = [];
  filterTerms(query, terms, params);
  if (before !== undefined) {
    terms.push("seq < ?");
    params.push(before);
  }
  const where = terms.length > 0 ? `WHERE ${terms.join(" AND ")}` : "";
  params.push(limit);
  return { sql: `SELECT seq, record FROM events ${where} ORDER BY seq DESC LIMIT ?`, params };
}

/** Up to `limit` rows with seq > `afterSeq`, ascending. */
export function buildPgReadAfterQuery(
  afterSeq: number,
  limit: number,
  filter: Omit<EventQuery, "after" | "limit"> = {},
): SqlQuery {
  const terms = ["seq > ?"];
  const params: unknown[] = [afterSeq];
  filterTerms(filter, terms, params);
  params.push(limit);
  return { sql: `SELECT seq, record FROM events WHERE ${terms.join(" AND ")} ORDER BY seq ASC LIMIT ?`, params };
}

/** The indexed columns of a record (text without U+0000) and its JSONB filter document. */
export function eventColumns(record: EventRecord, summarizeEvent: SummarizeEvent) {
  const summary = summarizeEvent(record);
  const { seq: _seq, ...rest } = record;
  const doc = JSON.stringify({ event: record.event, headers: record.headers });
  return {
    id: pgText(record.id),
    sourceId: pgText(record.sourceId),
    type: pgText(summary.type),
    subject: pgText(summary.subject),
    externalId: pgText(summary.externalId),
    receivedAt: record.receivedAt,
    record: JSON.stringify(rest),
    // JSONB cannot hold U+0000 nor a lone surrogate: such a row has no document and is checked
    // in memory.
    doc: UNSUPPORTED_ESCAPE.test(doc) ? null : doc,
  };
}

/**
 * An escape PostgreSQL's JSON types refuse or cannot turn into text: U+0000, or a surrogate
 * (JSON.stringify escapes only lone ones). A preceding escaped backslash (`\\u0000` is text)
 * matches too, which costs only the pushdown of that row.
 */
const UNSUPPORTED_ESCAPE = /\\u(0000|d[89a-f])/i;
