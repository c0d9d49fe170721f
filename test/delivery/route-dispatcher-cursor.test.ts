/**
 * The routing cursor when batches create no delivery (no route names a delivered destination):
 * it moves in memory and is written once per flush period and at stop, not once per batch; a
 * batch that creates records carries the cursor as before; and when no route names a delivered
 * destination at all, the events are not even read back (the cursor moves to the last seq).
 */
import { describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import type { DeliveryRecord, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import type { compileRoutes } from "../../src/routes/match-routes.ts";
import { countReadBacks, dispatcherFixture } from "./helpers/route-dispatcher-fixture.ts";

async function setup(routes: Parameters<typeof compileRoutes>[0]) {
  const { store, reads } = await countReadBacks();
  const inner = await memoryOutbox(undefined);
  const writes: number[] = [];
  // Counts the outbox writes that carry a cursor.
  const outbox: OutboxStore = {
    ...inner,
    createDeliveries(records: readonly DeliveryRecord[], cursor: number) {
      writes.push(cursor);
      return inner.createDeliveries(records, cursor);
    },
  };
  const t = dispatcherFixture({ store, outbox, routes, pollIntervalMs: 60_000 });
  return { ...t, store, inner, writes, reads };
}

describe("routing cursor without deliveries", () => {
  it("is written once per flush period and at stop, not per batch", async () => {
    const t = await setup([]);
    await t.dispatcher.start();
    for (let n = 1; n <= 5; n++) await t.append(n);
    t.dispatcher.wake();
    await t.settle();
    // Five events in batches of two: routed in memory, nothing written yet.
    expect(t.dispatcher.cursor).toBe(5);
    expect(t.writes).toEqual([]);
    await t.time.advance(1000);
    expect(t.writes).toEqual([5]);
    expect(await t.inner.readCursor()).toBe(5);
    await t.append(6);
    t.dispatcher.wake();
    await t.settle();
    t.dispatcher.stop();
    await t.settle();
    expect(t.writes).toEqual([5, 6]);
    expect(await t.inner.readCursor()).toBe(6);
    // No route, so nothing could be delivered: no event was read back to route it.
    expect(t.reads).toEqual([]);
  });

  it("reads events back when a route names a delivered destination, even if none matches yet", async () => {
    const t = await setup([
      { types: ["never.*"], destinations: ["hook"] },
      { types: ["*"], destinations: ["unknown"] },
    ]);
    await t.dispatcher.start();
    for (let n = 1; n <= 3; n++) await t.append(n);
    t.dispatcher.wake();
    await t.settle();
    expect(t.reads).toEqual([1, 2, 3]);
    expect(t.created).toEqual([]);
    expect(t.dispatcher.cursor).toBe(3);
    t.dispatcher.stop();
  });

  it("a batch that creates records writes them with the cursor at once", async () => {
    const t = await setup([{ types: ["*"], destinations: ["hook"] }]);
    await t.dispatcher.start();
    await t.append(1);
    t.dispatcher.wake();
    await t.settle();
    expect(t.created.map((r) => r.seq)).toEqual([1]);
    expect(t.writes).toEqual([1]);
    expect(await t.inner.readCursor()).toBe(1);
    t.dispatcher.stop();
  });
});
