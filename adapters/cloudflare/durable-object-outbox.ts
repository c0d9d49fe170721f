/**
 * The outbox (src/delivery/outbox-contract.ts) on a Durable Object's SQLite storage, with the
 * schema and statements of the embedded SQLite store (src/store/sql/outbox-sql.ts). Each method
 * is synchronous SQL inside the object that owns the storage (delivery-object.ts), so it is
 * atomic there, and the object's output gate makes it durable before anything it causes is seen
 * outside. `createDeliveries` inserts the records and moves the routing cursor in one transaction.
 * One object owns the outbox (the delivery object), so its `claimDue` / `renewLeases` leases are
 * kept in the object's memory over a view of the table (src/delivery/local-leases.ts), as the
 * embedded SQLite outbox keeps them; an eviction drops them together with their only owner.
 */
import { createLocalLeases } from "../../src/delivery/local-leases.ts";
import type { DeliveryRecord, DestinationState, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import {
  buildDeliveryListQuery,
  countsByDestination,
  type DeliveryCountRow,
  deliveryFromRow,
  deliveryParams,
  OUTBOX_SQL,
} from "../../src/delivery/sql/outbox-sql.ts";
import { META, META_SQL } from "../../src/store/sql/schema.ts";
import type { DurableObjectStorage } from "./cloudflare-types.ts";
import { prepareDurableStorage } from "./migrate-durable-storage.ts";

/** Rows deleted per retention statement. */
const PURGE_BATCH = 500;
const COUNT_PURGEABLE = `SELECT count(*) AS n FROM deliveries
  WHERE state IN ('delivered', 'dead', 'skipped') AND updated_at < ?`;

type RecordRow = { record: string };

/** Creates the outbox on `storage` (the schema is created when missing). */
export function createDurableObjectOutbox(storage: DurableObjectStorage): OutboxStore {
  const { sql } = storage;
  prepareDurableStorage(storage, "the delivery object's Durable Object storage");
  let closed = false;
  const ensureOpen = () => {
    if (closed) throw new Error("durable object outbox is closed");
  };
  const records = (query: string, ...params: unknown[]) =>
    sql
      .exec<RecordRow>(query, ...params)
      .toArray()
      .map(deliveryFromRow);
  const leases = createLocalLeases({
    active: () => records(OUTBOX_SQL.active),
    get: (eventId, destinationId) => records(OUTBOX_SQL.get, eventId, destinationId)[0],
  });

  return {
    name: "durable-object",
    async readCursor() {
      ensureOpen();
      return sql.exec<{ value: number }>(META_SQL.get, META.cursor).toArray()[0]?.value ?? 0;
    },
    async createDeliveries(list, cursor, lease) {
      ensureOpen();
      const created = storage.transactionSync(() => {
        const inserted: DeliveryRecord[] = [];
        for (const record of list) {
          const params = deliveryParams(record);
          // `create` does nothing on an existing (event, destination): no row written, not inserted.
          if (sql.exec(OUTBOX_SQL.create, ...params).rowsWritten === 0) continue;
          inserted.push(deliveryFromRow({ record: params[6] as string }));
        }
        sql.exec(META_SQL.raise, META.cursor, cursor);
        return inserted;
      });
      leases.afterCreate(created, lease);
      return created;
    },
    async saveDeliveries(list) {
      ensureOpen();
      const rows = list.map(deliveryParams);
      storage.transactionSync(() => {
        for (const params of rows) sql.exec(OUTBOX_SQL.save, ...params);
      });
      leases.afterSave(list);
    },
    claimDue: leases.claimDue,
    renewLeases: leases.renewLeases,
    async getDelivery(eventId, destinationId) {
      ensureOpen();
      return records(OUTBOX_SQL.get, eventId, destinationId)[0];
    },
    async listByEvent(eventId) {
      ensureOpen();
      return records(OUTBOX_SQL.byEvent, eventId);
    },
    async listDeliveries(query) {
      ensureOpen();
      const built = buildDeliveryListQuery(query);
      const rows = records(built.sql, ...built.params);
      const more = rows.length > query.limit;
      const deliveries = more ? rows.slice(0, query.limit) : rows;
      return { deliveries, next: more ? (deliveries[deliveries.length - 1] as DeliveryRecord).seq : null };
    },
    async listActive() {
      ensureOpen();
      return records(OUTBOX_SQL.active);
    },
    async countByState() {
      ensureOpen();
      return countsByDestination(sql.exec<DeliveryCountRow>(OUTBOX_SQL.counts));
    },
    async listDestinationStates() {
      ensureOpen();
      return sql
        .exec<RecordRow>(OUTBOX_SQL.destinationStates)
        .toArray()
        .map((row) => JSON.parse(row.record) as DestinationState);
    },
    async saveDestinationState(state) {
      ensureOpen();
      sql.exec(OUTBOX_SQL.saveDestinationState, state.id, JSON.stringify(state));
    },
    async purge(before) {
      ensureOpen();
      // rowsWritten also counts index and trigger writes: the count comes from a SELECT.
      const removed = sql.exec<{ n: number }>(COUNT_PURGEABLE, before).one().n;
      while (sql.exec(OUTBOX_SQL.purgeBatch, before, PURGE_BATCH).rowsWritten > 0) {}
      return removed;
    },
    async close() {
      closed = true;
    },
  };
}
