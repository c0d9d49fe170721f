/**
 * The memory outbox driver: delivery records in process memory, nothing durable. For tests and
 * for the memory store; a restart forgets every delivery (as it forgets every event).
 */
import { createLocalLeases } from "../../src/delivery/local-leases.ts";
import type { OutboxFactory, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { createOutboxIndex, readFromIndex } from "../../src/delivery/outbox-index.ts";

export type MemoryOutboxOptions = Record<string, never>;

/** The memory outbox driver: an empty in-memory outbox. */
export const memoryOutbox = ((_options?: MemoryOutboxOptions): OutboxStore => {
  const index = createOutboxIndex();
  const { afterSave, afterCreate, ...leases } = createLocalLeases(index);
  return {
    name: "memory",
    async readCursor() {
      return index.cursor;
    },
    async createDeliveries(records, cursor, lease) {
      const created = index.create(records, cursor);
      afterCreate(created, lease);
      return created;
    },
    async saveDeliveries(records) {
      index.save(records);
      afterSave(records);
    },
    ...readFromIndex(index),
    ...leases,
    async saveDestinationState(state) {
      index.destinationStates.set(state.id, { ...state });
    },
    async purge(before) {
      return index.purge(before).length;
    },
    async close() {},
  };
}) satisfies OutboxFactory<MemoryOutboxOptions | undefined>;
