/**
 * The delivery engine's outbox writes (src/delivery/outbox-write-retry.ts): the writes made in one
 * turn of the event loop reach the outbox as one `saveDeliveries` call holding the last version
 * of each delivery, every caller is answered once that call is done, a failed call is retried
 * with what is still unsaved, and shutdown sends a turn that has not been sent yet.
 */
import { describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import type { DeliveryRecord, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { createRetryingPersist, lastVersions } from "../../src/delivery/outbox-write-retry.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { createManualTime } from "./helpers/manual-time.ts";

function record(eventId: string, state: DeliveryRecord["state"], seq = 1): DeliveryRecord {
  return {
    eventId,
    destinationId: "d1",
    seq,
    receivedAt: 1,
    createdAt: 1,
    updatedAt: 1,
    state,
    nextAttemptAt: 1,
    failures: 0,
    attempts: [],
  };
}

/** A memory outbox that notes every `saveDeliveries` call and can be told to fail the next ones. */
function countingOutbox() {
  const outbox = memoryOutbox();
  const calls: DeliveryRecord[][] = [];
  let failures = 0;
  const counted: OutboxStore = {
    ...outbox,
    async saveDeliveries(records) {
      calls.push([...records]);
      if (failures > 0) {
        failures--;
        throw new Error("disk full");
      }
      return outbox.saveDeliveries(records);
    },
  };
  return { outbox: counted, calls, failNext: (n: number) => (failures = n) };
}

/** Runs queued `afterTurn` callbacks when the test says the turn is over. */
function manualTurns() {
  const queued: (() => void)[] = [];
  return {
    afterTurn: (run: () => void) => void queued.push(run),
    endTurn: () => {
      for (const run of queued.splice(0)) run();
    },
    queued: () => queued.length,
  };
}

describe("outbox writes of the delivery engine", () => {
  it("sends the writes of one turn as one call with the last version of each delivery", async () => {
    const { outbox, calls } = countingOutbox();
    const time = createManualTime(async () => {});
    const turns = manualTurns();
    const writes = createRetryingPersist({
      outbox,
      scheduler: time.scheduler,
      logger: createLogger("silent"),
      now: time.clock.now,
      afterTurn: turns.afterTurn,
    });
    const answered: string[] = [];
    const a = writes.persist([record("e1", "delivering")]).then(() => answered.push("a"));
    const b = writes.persist([record("e2", "delivering", 2)]).then(() => answered.push("b"));
    const c = writes.persist([record("e1", "delivered")]).then(() => answered.push("c"));
    // Nothing is written before the turn ends; the unsaved versions are what the views show.
    await Promise.resolve();
    expect(calls).toHaveLength(0);
    expect(turns.queued()).toBe(1);
    expect(writes.overlay(record("e1", "pending")).state).toBe("delivered");
    turns.endTurn();
    await Promise.all([a, b, c]);
    expect(answered.sort()).toEqual(["a", "b", "c"]);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.map((r) => `${r.eventId}:${r.state}`)).toEqual(["e2:delivering", "e1:delivered"]);
    expect((await outbox.getDelivery("e1", "d1"))?.state).toBe("delivered");
    expect((await outbox.getDelivery("e2", "d1"))?.state).toBe("delivering");
    // The next turn is a new call.
    const d = writes.persist([record("e2", "delivered", 2)]);
    turns.endTurn();
    await d;
    expect(calls).toHaveLength(2);
    expect((await outbox.getDelivery("e2", "d1"))?.state).toBe("delivered");
  });

  it("retries a failed turn with what is still unsaved, and counts it while it is", async () => {
    const { outbox, calls, failNext } = countingOutbox();
    const time = createManualTime(async () => {});
    const turns = manualTurns();
    const writes = createRetryingPersist({
      outbox,
      scheduler: time.scheduler,
      logger: createLogger("silent"),
      now: time.clock.now,
      afterTurn: turns.afterTurn,
    });
    failNext(1);
    const first = writes.persist([record("e1", "delivering"), record("e2", "delivering", 2)]);
    turns.endTurn();
    await first;
    expect(calls).toHaveLength(1);
    expect(await outbox.getDelivery("e1", "d1")).toBeUndefined();
    expect((await writes.countByState()).d1).toEqual({ delivering: 2 });
    // A newer version made meanwhile replaces the one that failed.
    const second = writes.persist([record("e1", "delivered")]);
    turns.endTurn();
    await second;
    await time.advance(500);
    await time.advance(0);
    expect((await outbox.getDelivery("e1", "d1"))?.state).toBe("delivered");
    expect((await outbox.getDelivery("e2", "d1"))?.state).toBe("delivering");
    expect((await writes.countByState()).d1).toEqual({ delivered: 1, delivering: 1 });
  });

  it("sends a turn not yet sent when it stops, and answers its callers once", async () => {
    const { outbox, calls } = countingOutbox();
    const time = createManualTime(async () => {});
    const turns = manualTurns();
    const writes = createRetryingPersist({
      outbox,
      scheduler: time.scheduler,
      logger: createLogger("silent"),
      now: time.clock.now,
      afterTurn: turns.afterTurn,
    });
    const pending = writes.persist([record("e1", "delivered")]);
    await writes.stop();
    await pending;
    expect(calls).toHaveLength(1);
    expect((await outbox.getDelivery("e1", "d1"))?.state).toBe("delivered");
    // The turn's own callback comes later and writes nothing more.
    turns.endTurn();
    await Promise.resolve();
    expect(calls).toHaveLength(1);
  });

  it("keeps by default the writes of one callback and its continuations together (queueMicrotask)", async () => {
    const { outbox, calls } = countingOutbox();
    const time = createManualTime(async () => {});
    const writes = createRetryingPersist({
      outbox,
      scheduler: time.scheduler,
      logger: createLogger("silent"),
      now: time.clock.now,
    });
    await Promise.all([writes.persist([record("e1", "delivering")]), writes.persist([record("e2", "delivering", 2)])]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toHaveLength(2);
  });

  it("lastVersions keeps each delivery's last version in the order of those versions", () => {
    const list = [record("a", "pending"), record("b", "pending", 2), record("a", "delivering"), record("c", "dead", 3)];
    expect(lastVersions(list).map((r) => `${r.eventId}:${r.state}`)).toEqual(["b:pending", "a:delivering", "c:dead"]);
    const distinct = [record("a", "pending"), record("b", "pending", 2)];
    expect(lastVersions(distinct)).toEqual(distinct);
  });
});
