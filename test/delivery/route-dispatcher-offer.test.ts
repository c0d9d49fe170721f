/**
 * The route dispatcher routes the events the hub hands over (`offer`) from those copies when
 * they are the next ones after its cursor, without reading the event log back; an offered event
 * behind a gap (events not offered, or offered out of order) makes it read the log, and a plain
 * wake-up (the poll, a lost notification) still reads what was never offered.
 */
import { describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { countReadBacks, dispatcherFixture } from "./helpers/route-dispatcher-fixture.ts";

async function setup(shared = false) {
  const { store, reads } = await countReadBacks();
  const inner = await memoryOutbox(undefined);
  const cursorReads = { count: 0 };
  const outbox: typeof inner = {
    ...inner,
    shared,
    readCursor() {
      cursorReads.count++;
      return inner.readCursor();
    },
  };
  const t = dispatcherFixture({ store, outbox, pollIntervalMs: 60_000 });
  return { ...t, reads, outbox, cursorReads };
}

describe("routing the events the hub hands over", () => {
  it("routes offered events that follow the cursor without reading them back", async () => {
    const t = await setup();
    await t.dispatcher.start();
    await t.settle();
    const records = [await t.append(1), await t.append(2), await t.append(3)];
    for (const record of records) t.dispatcher.offer(record);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(t.dispatcher.cursor).toBe(3);
    expect(await t.outbox.readCursor()).toBe(3);
    expect(t.reads).toEqual([]);
    t.dispatcher.stop();
  });

  it("reads the log when an offered event waits behind events not offered", async () => {
    const t = await setup();
    await t.dispatcher.start();
    await t.settle();
    await t.append(1);
    const second = await t.append(2);
    const third = await t.append(3);
    // Offered out of order, and event 1 never: the log is read from the cursor.
    t.dispatcher.offer(third);
    t.dispatcher.offer(second);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3]);
    // One batch (two events) read from the log; the offered copy of event 3 then follows it.
    expect(t.reads).toEqual([1, 2]);
    t.dispatcher.stop();
  });

  it("reads the log for what it could not keep when too many offered events wait", async () => {
    const t = await setup();
    await t.dispatcher.start();
    await t.settle();
    // The routing is busy elsewhere: 4,097 events are offered before it runs (the first one
    // starts it; the rest pile up while it awaits its first write).
    const records: EventRecord[] = [];
    for (let n = 1; n <= 4_200; n++) records.push(await t.append(n));
    for (const record of records) t.dispatcher.offer(record);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual(records.map((r) => r.seq));
    expect(t.reads.length).toBeGreaterThan(0);
    t.dispatcher.stop();
  });

  it("still routes what was never offered at the next plain wake-up or poll", async () => {
    const t = await setup();
    await t.dispatcher.start();
    await t.settle();
    await t.append(1);
    const second = await t.append(2);
    t.dispatcher.offer(second);
    await t.settle();
    await t.append(3);
    // Nothing offered after the cursor: the poll reads the log.
    await t.time.advance(60_000);
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3]);
    await t.append(4);
    t.dispatcher.wake();
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    t.dispatcher.stop();
  });

  it("routes this instance's own appends from their copies, and waits for the hub behind a gap without reading the log", async () => {
    const t = await setup();
    await t.dispatcher.start();
    await t.settle();
    // Local appends that follow the cursor: routed at once, nothing read back.
    const own = [await t.append(1), await t.append(2)];
    for (const record of own) t.dispatcher.offerLocal(record);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2]);
    expect(t.reads).toEqual([]);
    // Another instance recorded 3 and 4; this one recorded 5: it waits for the hub, no log read.
    const others = [await t.append(3), await t.append(4)];
    const mine = await t.append(5);
    t.dispatcher.offerLocal(mine);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2]);
    expect(t.reads).toEqual([]);
    // The hub hands over every instance's events (this one's again, too): routed once, in order.
    for (const record of [...own, ...others, mine]) t.dispatcher.offer(record);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(t.reads).toEqual([]);
    expect(await t.outbox.readCursor()).toBe(5);
    t.dispatcher.stop();
  });

  it("on a shared outbox, reads the shared cursor before offered events only after another router was first", async () => {
    const t = await setup(true);
    await t.dispatcher.start();
    await t.settle();
    // Routed alone: one read of the shared cursor for the first batch, none after.
    const first = [await t.append(1), await t.append(2)];
    for (const record of first) t.dispatcher.offer(record);
    await t.settle();
    const reads = t.cursorReads.count;
    for (const record of [await t.append(3), await t.append(4)]) t.dispatcher.offer(record);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(t.cursorReads.count).toBe(reads);
    // Another instance routes 5 to 8 first; this one routes 5 and 6 (their records exist: none
    // created), then reads the cursor and skips 7 and 8.
    const others = [await t.append(5), await t.append(6), await t.append(7), await t.append(8)];
    const now = t.time.clock.now();
    await t.outbox.createDeliveries(
      others.map((e) => ({
        eventId: e.id,
        destinationId: "hook",
        seq: e.seq,
        receivedAt: e.receivedAt,
        createdAt: now,
        updatedAt: now,
        state: "pending" as const,
        nextAttemptAt: now,
        failures: 0,
        attempts: [],
      })),
      8,
    );
    for (const record of others) t.dispatcher.offer(record);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(t.cursorReads.count).toBe(reads + 1);
    expect(t.dispatcher.cursor).toBe(8);
    // Routing alone again: created as before, no read once a write created everything.
    for (const record of [await t.append(9), await t.append(10)]) t.dispatcher.offer(record);
    await t.settle();
    for (const record of [await t.append(11), await t.append(12)]) t.dispatcher.offer(record);
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1, 2, 3, 4, 9, 10, 11, 12]);
    expect(t.cursorReads.count).toBe(reads + 2);
    t.dispatcher.stop();
  });
});
