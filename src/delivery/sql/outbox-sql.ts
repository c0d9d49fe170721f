/**
 * SQL of the outbox (the `OutboxStore` side of the SQLite schema in src/store/sql/schema.ts): delivery
 * records keyed by (event, destination), destination states, counts kept by triggers, and the
 * translation of a `DeliveryQuery` into one indexed SELECT. Runtime-agnostic strings with `?`
 * parameters, shared by the Node driver and a future Durable Object driver.
 */

import type { SqlQuery } from "../../store/sql/event-sql.ts";
import type { DeliveryQuery, DeliveryRecord, DeliveryState } from "../outbox-contract.ts";

export const OUTBOX_SQL = {
  /** Inserts when (event, destination) is new; `changes` tells whether it did. */
  create: `INSERT INTO deliveries (event_id, destination_id, seq, state, received_at, updated_at, record)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id, destination_id) DO NOTHING`,
  save: `INSERT INTO deliveries (event_id, destination_id, seq, state, received_at, updated_at, record)
    VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id, destination_id) DO UPDATE SET
    seq = excluded.seq, state = excluded.state, received_at = excluded.received_at,
    updated_at = excluded.updated_at, record = excluded.record`,
  get: "SELECT record FROM deliveries WHERE event_id = ? AND destination_id = ?",
  byEvent: "SELECT record FROM deliveries WHERE event_id = ? ORDER BY destination_id",
  active: `SELECT record FROM deliveries WHERE state NOT IN ('delivered', 'dead', 'skipped')
    ORDER BY seq, destination_id`,
  counts: "SELECT destination_id, state, n FROM delivery_counts WHERE n > 0",
  destinationStates: "SELECT record FROM destination_states ORDER BY id",
  saveDestinationState: `INSERT INTO destination_states (id, record) VALUES (?, ?)
    ON CONFLICT (id) DO UPDATE SET record = excluded.record`,
  /** One retention batch of terminal records: parameters `before`, `limit`. */
  purgeBatch: `DELETE FROM deliveries WHERE rowid IN
    (SELECT rowid FROM deliveries
      WHERE state IN ('delivered', 'dead', 'skipped') AND updated_at < ? ORDER BY updated_at LIMIT ?)`,
} as const;

/** The parameters of `OUTBOX_SQL.create` and `OUTBOX_SQL.save` for a record. */
export function deliveryParams(record: DeliveryRecord): unknown[] {
  return [
    record.eventId,
    record.destinationId,
    record.seq,
    record.state,
    record.receivedAt,
    record.updatedAt,
    JSON.stringify(record),
  ];
}

/** The record stored in a row (a fresh object: callers may change it). */
export function deliveryFromRow(row: { record: string }): DeliveryRecord {
  return JSON.parse(row.record) as DeliveryRecord;
}

/** One page of `listDeliveries`, newest first; selects `limit + 1` rows so `next` is exact. */
export function buildDeliveryListQuery(query: DeliveryQuery): SqlQuery {
  const terms = ["destination_id = ?"];
  const params: unknown[] = [query.destinationId];
  if (query.states !== undefined) {
    terms.push(`state IN (${query.states.map(() => "?").join(", ") || "NULL"})`);
    params.push(...query.states);
  }
  if (query.from !== undefined) {
    terms.push("received_at >= ?");
    params.push(query.from);
  }
  if (query.to !== undefined) {
    terms.push("received_at < ?");
    params.push(query.to);
  }
  if (query.after !== undefined) {
    terms.push("seq < ?");
    params.push(query.after);
  }
  params.push(query.limit + 1);
  return {
    sql: `SELECT seq, record FROM deliveries WHERE ${terms.join(" AND ")} ORDER BY seq DESC LIMIT ?`,
    params,
  };
}

/** A row of `OUTBOX_SQL.counts`. */
export interface DeliveryCountRow {
  destination_id: string;
  state: DeliveryState;
  n: number;
}

/** The rows of `OUTBOX_SQL.counts` as the `countByState` answer: destination -> state -> count. */
export function countsByDestination(
  rows: Iterable<DeliveryCountRow>,
): Record<string, Partial<Record<DeliveryState, number>>> {
  const out: Record<string, Partial<Record<DeliveryState, number>>> = {};
  for (const row of rows) {
    const perState = out[row.destination_id] ?? {};
    out[row.destination_id] = perState;
    perState[row.state] = row.n;
  }
  return out;
}
