/**
 * The outbox on SQLite (the `OutboxStore` half of the sqlite driver): one row per (event,
 * destination) in the database the event log lives in, written through the same group commit,
 * so a delivery state change costs a share of one fsync and memory holds no records at all.
 * Creating records and moving the routing cursor happen in one transaction, so the cursor never
 * passes records that are not on disk (src/delivery/outbox-contract.ts).
 */
import type { Database } from "better-sqlite3";
import { createLocalLeases } from "../../../src/delivery/local-leases.ts";
import { type DeliveryRecord, deliveryKey, type OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import {
  buildDeliveryListQuery,
  countsByDestination,
  type DeliveryCountRow,
  deliveryFromRow,
  deliveryParams,
  OUTBOX_SQL,
} from "../../../src/delivery/sql/outbox-sql.ts";
import { META, META_SQL } from "../../../src/store/sql/schema.ts";
import type { GroupCommit, WriteStatement } from "./group-commit.ts";
import { statementOn } from "./retained-statements.ts";

export interface SqliteOutboxParts {
  db: Database;
  writer: GroupCommit;
  /** Rows deleted per retention transaction. */
  purgeBatchSize: number;
  /** Gives the outbox's share of the database back (the store may still use it). */
  release(): Promise<void>;
}

/** The name of a delivery's row for the group commit. */
const rowOf = (record: DeliveryRecord) => deliveryKey(record.eventId, record.destinationId);

/** Builds the outbox on an open database. */
export function createSqliteOutboxDriver(parts: SqliteOutboxParts): OutboxStore {
  const { db, writer, purgeBatchSize } = parts;
  /** Prepared once per SQL text and kept (retained-statements.ts: never garbage collected). */
  const prepare = (sql: string) => statementOn(db, sql);
  let closing: Promise<void> | undefined;
  const ensureOpen = () => {
    if (closing) throw new Error("sqlite outbox is closed");
  };
  const records = (rows: unknown[]) => (rows as { record: string }[]).map(deliveryFromRow);
  // One process owns the database, so leases are kept in memory over a view of it
  // (src/delivery/local-leases.ts), with the same semantics as the shared Redis outbox.
  const leases = createLocalLeases({
    active: () => records(prepare(OUTBOX_SQL.active).all()),
    get: (eventId, destinationId) => {
      const row = prepare(OUTBOX_SQL.get).get(eventId, destinationId) as { record: string } | undefined;
      return row && deliveryFromRow(row);
    },
  });

  return {
    name: "sqlite",
    async readCursor() {
      ensureOpen();
      return (prepare(META_SQL.get).get(META.cursor) as { value: number } | undefined)?.value ?? 0;
    },
    async createDeliveries(list, cursor, lease) {
      ensureOpen();
      // Serialized now: later changes by the caller do not reach the database.
      const statements: WriteStatement[] = list.map((record) => [OUTBOX_SQL.create, deliveryParams(record)]);
      statements.push([META_SQL.raise, [META.cursor, cursor]]);
      const changes = await writer.run(statements, undefined, { rows: list.map(rowOf), overwrites: false });
      // The caller's own records, not parsed back: it made them and hands them on (the router).
      const created = list.filter((_, i) => changes[i] === 1);
      leases.afterCreate(created, lease);
      return created;
    },
    async saveDeliveries(list) {
      ensureOpen();
      if (list.length === 0) return;
      // A save replaces the whole row: one still queued behind the writer for the same delivery
      // (its "delivering" when the outcome is in already) is not written (group-commit.ts).
      await writer.run(
        list.map((record): WriteStatement => [OUTBOX_SQL.save, deliveryParams(record)]),
        undefined,
        { rows: list.map(rowOf), overwrites: true },
      );
      leases.afterSave(list);
    },
    claimDue: leases.claimDue,
    renewLeases: leases.renewLeases,
    async getDelivery(eventId, destinationId) {
      ensureOpen();
      const row = prepare(OUTBOX_SQL.get).get(eventId, destinationId) as { record: string } | undefined;
      return row && deliveryFromRow(row);
    },
    async listByEvent(eventId) {
      ensureOpen();
      return records(prepare(OUTBOX_SQL.byEvent).all(eventId));
    },
    async listDeliveries(query) {
      ensureOpen();
      const { sql, params } = buildDeliveryListQuery(query);
      const rows = records(prepare(sql).all(params));
      const more = rows.length > query.limit;
      const deliveries = more ? rows.slice(0, query.limit) : rows;
      return { deliveries, next: more ? (deliveries[deliveries.length - 1] as DeliveryRecord).seq : null };
    },
    async listActive() {
      ensureOpen();
      return records(prepare(OUTBOX_SQL.active).all());
    },
    async countByState() {
      ensureOpen();
      return countsByDestination(prepare(OUTBOX_SQL.counts).all() as DeliveryCountRow[]);
    },
    async listDestinationStates() {
      ensureOpen();
      return records(prepare(OUTBOX_SQL.destinationStates).all()) as unknown as Awaited<
        ReturnType<OutboxStore["listDestinationStates"]>
      >;
    },
    async saveDestinationState(state) {
      ensureOpen();
      const json = JSON.stringify(state);
      await writer.run([[OUTBOX_SQL.saveDestinationState, [state.id, json]]]);
    },
    async purge(before) {
      ensureOpen();
      let removed = 0;
      for (let batches = 0; batches < 1_000_000; batches++) {
        const [changes = 0] = await writer.run([[OUTBOX_SQL.purgeBatch, [before, purgeBatchSize]]]);
        removed += changes;
        if (changes < purgeBatchSize) break;
      }
      return removed;
    },
    close() {
      closing ??= parts.release();
      return closing;
    },
  };
}
