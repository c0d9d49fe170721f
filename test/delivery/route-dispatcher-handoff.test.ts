/**
 * The route dispatcher hands new records to their lanes before their outbox write is durable,
 * with the writes one at a time and in order: a delivery never waits for the router's write; a
 * failed write is carried by the next one, so the durable cursor never passes a record that is
 * not written; events recorded before start are written first and only the records the write
 * created go to the lanes (they may exist already).
 */
import { describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import type { DeliveryRecord, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { makeRecord } from "../store/sample-records.ts";
import { dispatcherFixture } from "./helpers/route-dispatcher-fixture.ts";

async function setup() {
  const store = await memoryStore(undefined);
  const inner = await memoryOutbox(undefined);
  /** Each routing write: its records' seqs and cursor, and how it ended. */
  const writes: { seqs: number[]; cursor: number; outcome?: "ok" | "failed" }[] = [];
  let failNext = 0;
  /** Writes held until the test releases them (a slow disk). */
  const held: (() => void)[] = [];
  let hold = false;
  const outbox: OutboxStore = {
    ...inner,
    async createDeliveries(records: readonly DeliveryRecord[], cursor: number) {
      const write: (typeof writes)[number] = { seqs: records.map((r) => r.seq), cursor };
      writes.push(write);
      if (hold) await new Promise<void>((resolve) => held.push(resolve));
      if (failNext > 0) {
        failNext--;
        write.outcome = "failed";
        throw new Error("disk full");
      }
      write.outcome = "ok";
      return inner.createDeliveries(records, cursor);
    },
  };
  const t = dispatcherFixture({
    store,
    outbox,
    initialState: () => "pending",
    pollIntervalMs: 1000,
    settleFailures: true,
  });
  return {
    ...t,
    inner,
    writes,
    handed: t.created,
    failNext: (n: number) => {
      failNext = n;
    },
    hold: (on: boolean) => {
      hold = on;
      if (!on) for (const release of held.splice(0)) release();
    },
  };
}

describe("route dispatcher: records go to their lanes before their write", () => {
  it("hands new records over while their write is still in flight, writing one batch at a time", async () => {
    const t = await setup();
    await t.dispatcher.start();
    t.hold(true);
    for (let n = 1; n <= 5; n++) await t.append(n);
    t.dispatcher.wake();
    // Wait until the dispatcher has read every event (the first write is held).
    for (let i = 0; i < 100 && t.handed.length < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(t.handed.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    // One write in flight (the first batch); the others wait for it, nothing durable yet.
    expect(t.writes).toEqual([{ seqs: [1, 2], cursor: 2 }]);
    expect(await t.inner.readCursor()).toBe(0);
    t.hold(false);
    await t.settle();
    // The rest went in one write after the first, with the cursor.
    expect(t.writes.map((w) => [w.seqs, w.cursor, w.outcome])).toEqual([
      [[1, 2], 2, "ok"],
      [[3, 4, 5], 5, "ok"],
    ]);
    expect(await t.inner.readCursor()).toBe(5);
    expect((await t.inner.listActive()).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    t.dispatcher.stop();
    await t.settle();
  });

  it("a failed write is carried by the next one; the cursor never passes an unwritten record", async () => {
    const t = await setup();
    await t.dispatcher.start();
    t.failNext(1);
    await t.append(1);
    t.dispatcher.wake();
    await t.settle();
    // Handed over at once, but its write failed: nothing durable, the cursor stays.
    expect(t.handed.map((r) => r.seq)).toEqual([1]);
    expect(t.writes.map((w) => w.outcome)).toEqual(["failed"]);
    expect(await t.inner.readCursor()).toBe(0);
    // New events meanwhile go to their lanes; their write waits for the poll (backing off).
    await t.append(2);
    t.dispatcher.wake();
    await t.settle();
    expect(t.handed.map((r) => r.seq)).toEqual([1, 2]);
    expect(t.writes).toHaveLength(1);
    expect(await t.inner.readCursor()).toBe(0);
    // The poll retries: one write with both records and the cursor past them.
    await t.time.advance(2000);
    expect(t.writes.map((w) => [w.seqs, w.cursor, w.outcome])).toEqual([
      [[1], 1, "failed"],
      [[1, 2], 2, "ok"],
    ]);
    expect(await t.inner.readCursor()).toBe(2);
    expect((await t.inner.listActive()).map((r) => r.seq)).toEqual([1, 2]);
    // Nothing was handed over twice.
    expect(t.handed.map((r) => r.seq)).toEqual([1, 2]);
    t.dispatcher.stop();
    await t.settle();
  });

  it("a lane's save that lands before the record's create is kept", async () => {
    const t = await setup();
    await t.dispatcher.start();
    t.hold(true);
    await t.append(1);
    await t.append(2);
    await t.append(3);
    t.dispatcher.wake();
    for (let i = 0; i < 100 && t.handed.length < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    // Event 3's lane delivers it before the router's write for it: its outcome is saved first.
    const third = t.handed.find((r) => r.seq === 3) as DeliveryRecord;
    await t.inner.saveDeliveries([{ ...third, state: "delivered", updatedAt: third.updatedAt + 1 }]);
    t.hold(false);
    await t.settle();
    expect((await t.inner.getDelivery(third.eventId, "hook"))?.state).toBe("delivered");
    expect(await t.inner.readCursor()).toBe(3);
    t.dispatcher.stop();
    await t.settle();
  });

  it("events recorded before start are written first; only the records created go to the lanes", async () => {
    const t = await setup();
    await t.append(1);
    await t.append(2);
    // Event 2's record exists already (saved before a crash took the routing write).
    const existing = makeRecord(2);
    await t.inner.saveDeliveries([
      {
        eventId: existing.id,
        destinationId: "hook",
        seq: 2,
        receivedAt: existing.receivedAt,
        createdAt: 1,
        updatedAt: 1,
        state: "delivered",
        nextAttemptAt: 1,
        failures: 0,
        attempts: [],
      },
    ]);
    await t.dispatcher.start();
    await t.settle();
    expect(t.handed.map((r) => r.seq)).toEqual([1]);
    expect(await t.inner.readCursor()).toBe(2);
    // A new event goes to its lane ahead of its write again.
    await t.append(3);
    t.dispatcher.wake();
    await t.settle();
    expect(t.handed.map((r) => r.seq)).toEqual([1, 3]);
    expect(await t.inner.readCursor()).toBe(3);
    t.dispatcher.stop();
    await t.settle();
  });
});
