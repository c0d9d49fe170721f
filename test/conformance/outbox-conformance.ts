/**
 * The outbox conformance suite: every OutboxStore driver runs these same cases (the way
 * unstorage tests every driver with one suite). `reopen` is given by durable drivers: it closes
 * the outbox and opens a new one on the same data, to check what survives a restart.
 */
import { describe, expect, it } from "vitest";
import type { DeliveryRecord, DeliveryState, OutboxStore } from "../../src/delivery/outbox-contract.ts";

export interface OutboxHarness {
  open(): Promise<OutboxStore>;
  /** Closes `outbox` and opens the same data again (durable drivers only). */
  reopen?(outbox: OutboxStore): Promise<OutboxStore>;
}

let counter = 0;

/** A record for event number `n` to `destinationId`. */
export function makeDelivery(n: number, destinationId: string, changes: Partial<DeliveryRecord> = {}): DeliveryRecord {
  counter++;
  return {
    eventId: `evt_${String(n).padStart(32, "0")}`,
    destinationId,
    seq: n,
    subject: `agreements/${n % 3}`,
    receivedAt: 1_000_000 + n * 1000,
    createdAt: 1_000_000 + n * 1000,
    updatedAt: 1_000_000 + n * 1000 + counter,
    state: "pending",
    nextAttemptAt: 1_000_000 + n * 1000,
    failures: 0,
    attempts: [],
    ...changes,
  };
}

/** Registers the suite for one driver. */
export function testOutboxDriver(name: string, harness: OutboxHarness): void {
  describe(`outbox conformance: ${name}`, () => {
    it("creates one record per (event, destination) and moves the cursor", async () => {
      const outbox = await harness.open();
      expect(await outbox.readCursor()).toBe(0);
      const first = await outbox.createDeliveries([makeDelivery(1, "a"), makeDelivery(1, "b")], 1);
      expect(first.map((r) => r.destinationId)).toEqual(["a", "b"]);
      expect(await outbox.readCursor()).toBe(1);
      // Re-routing after a crash: the same pairs again insert nothing and change nothing.
      await outbox.saveDeliveries([makeDelivery(1, "a", { state: "delivered" })]);
      const again = await outbox.createDeliveries([makeDelivery(1, "a"), makeDelivery(2, "a")], 2);
      expect(again.map((r) => `${r.seq}/${r.destinationId}`)).toEqual(["2/a"]);
      expect((await outbox.getDelivery(makeDelivery(1, "a").eventId, "a"))?.state).toBe("delivered");
      expect(await outbox.readCursor()).toBe(2);
      // The cursor never moves backwards.
      await outbox.createDeliveries([], 1);
      expect(await outbox.readCursor()).toBe(2);
      await outbox.close();
    });

    it("saves state, attempts and next attempt time, and copies records in and out", async () => {
      const outbox = await harness.open();
      const record = makeDelivery(5, "a");
      await outbox.createDeliveries([record], 5);
      const attempt = { at: 2_000_000, ok: false, status: 503, latencyMs: 12, error: "HTTP 503" };
      const failed: DeliveryRecord = {
        ...record,
        state: "failed-retrying",
        failures: 1,
        nextAttemptAt: 2_005_000,
        attempts: [attempt],
        lastError: "HTTP 503",
      };
      await outbox.saveDeliveries([failed]);
      failed.attempts.push({ ...attempt, at: 0 });
      const read = await outbox.getDelivery(record.eventId, "a");
      expect(read).toEqual({ ...failed, attempts: [attempt] });
      read?.attempts.push(attempt);
      expect((await outbox.getDelivery(record.eventId, "a"))?.attempts).toHaveLength(1);
      expect(await outbox.getDelivery(record.eventId, "zzz")).toBeUndefined();
      await outbox.close();
    });

    it("lists by event, by destination (newest first, filtered, paginated) and counts states", async () => {
      const outbox = await harness.open();
      const states: DeliveryState[] = ["delivered", "dead", "pending", "dead", "failed-retrying", "dead"];
      const records = states.flatMap((state, i) => [
        makeDelivery(i + 1, "a", { state }),
        makeDelivery(i + 1, "b", { state: "delivered" }),
      ]);
      await outbox.createDeliveries(records, 6);
      expect((await outbox.listByEvent(makeDelivery(3, "a").eventId)).map((r) => r.destinationId)).toEqual(["a", "b"]);

      const page1 = await outbox.listDeliveries({ destinationId: "a", limit: 4 });
      expect(page1.deliveries.map((r) => r.seq)).toEqual([6, 5, 4, 3]);
      const page2 = await outbox.listDeliveries({ destinationId: "a", limit: 4, after: page1.next ?? 0 });
      expect(page2.deliveries.map((r) => r.seq)).toEqual([2, 1]);
      expect(page2.next).toBeNull();

      const dead = await outbox.listDeliveries({ destinationId: "a", states: ["dead"], limit: 10 });
      expect(dead.deliveries.map((r) => r.seq)).toEqual([6, 4, 2]);
      const ranged = await outbox.listDeliveries({
        destinationId: "a",
        states: ["dead"],
        from: makeDelivery(3, "a").receivedAt,
        to: makeDelivery(6, "a").receivedAt,
        limit: 10,
      });
      expect(ranged.deliveries.map((r) => r.seq)).toEqual([4]);

      expect(await outbox.countByState()).toEqual({
        a: { delivered: 1, dead: 3, pending: 1, "failed-retrying": 1 },
        b: { delivered: 6 },
      });
      expect((await outbox.listActive()).map((r) => `${r.seq}/${r.state}`)).toEqual(["3/pending", "5/failed-retrying"]);
      await outbox.close();
    });

    it("keeps destination states and purges old terminal records only", async () => {
      const outbox = await harness.open();
      await outbox.saveDestinationState({ id: "a", paused: true, disabled: false, updatedAt: 1 });
      await outbox.saveDestinationState({ id: "a", paused: true, disabled: true, reason: "HTTP 410", updatedAt: 2 });
      expect(await outbox.listDestinationStates()).toEqual([
        { id: "a", paused: true, disabled: true, reason: "HTTP 410", updatedAt: 2 },
      ]);
      await outbox.createDeliveries(
        [
          makeDelivery(1, "a", { state: "delivered", updatedAt: 10 }),
          makeDelivery(2, "a", { state: "pending", updatedAt: 10 }),
          makeDelivery(3, "a", { state: "dead", updatedAt: 500 }),
        ],
        3,
      );
      expect(await outbox.purge(100)).toBe(1);
      const left = await outbox.listDeliveries({ destinationId: "a", limit: 10 });
      expect(left.deliveries.map((r) => r.seq)).toEqual([3, 2]);
      expect((await outbox.countByState()).a).toEqual({ pending: 1, dead: 1 });
      await outbox.close();
    });

    it("treats skipped records (a transform returned null) as final: not active, counted, purged", async () => {
      const outbox = await harness.open();
      await outbox.createDeliveries(
        [
          makeDelivery(1, "s", {
            state: "skipped",
            updatedAt: 10,
            attempts: [{ at: 10, ok: true, skipped: true, latencyMs: 0.1, transform: "sha256:0123456789abcdef" }],
          }),
          makeDelivery(2, "s", { state: "pending", updatedAt: 10 }),
          makeDelivery(3, "s", { state: "skipped", updatedAt: 500 }),
        ],
        3,
      );
      expect((await outbox.listActive()).filter((r) => r.destinationId === "s").map((r) => r.seq)).toEqual([2]);
      expect((await outbox.countByState()).s).toEqual({ pending: 1, skipped: 2 });
      expect((await outbox.getDelivery(makeDelivery(1, "s").eventId, "s"))?.attempts[0]).toMatchObject({
        skipped: true,
        transform: "sha256:0123456789abcdef",
      });
      expect(await outbox.purge(100)).toBe(1);
      const left = await outbox.listDeliveries({ destinationId: "s", limit: 10, states: ["skipped"] });
      expect(left.deliveries.map((r) => r.seq)).toEqual([3]);
      await outbox.close();
    });

    it("serializes concurrent writes in call order", async () => {
      const outbox = await harness.open();
      const base = makeDelivery(1, "a");
      await outbox.createDeliveries([base], 1);
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => outbox.saveDeliveries([{ ...base, failures: i, updatedAt: i }])),
      );
      expect((await outbox.getDelivery(base.eventId, "a"))?.failures).toBe(49);
      const creates = await Promise.all(
        Array.from({ length: 20 }, (_, i) => outbox.createDeliveries([makeDelivery(100 + (i % 5), "a")], 100 + i)),
      );
      expect(creates.flat()).toHaveLength(5);
      expect(await outbox.readCursor()).toBe(119);
      await outbox.close();
    });

    it("creates a large batch whole, some of it existing, with one cursor move", async () => {
      const outbox = await harness.open();
      // Larger than a driver's statement batch (PostgreSQL: 500 rows), existing records in the
      // first and the last part of it.
      const records = Array.from({ length: 1_203 }, (_, i) => makeDelivery(i + 1, i % 3 ? "a" : "b"));
      const existing = [records[7], records[1_201]] as DeliveryRecord[];
      expect(await outbox.createDeliveries(existing, 10)).toHaveLength(2);
      const created = await outbox.createDeliveries(records, 1_203);
      expect(created).toHaveLength(1_201);
      expect(new Set(created.map((r) => `${r.eventId}/${r.destinationId}`)).size).toBe(1_201);
      expect(created.some((r) => r.seq === 8 || r.seq === 1_202)).toBe(false);
      expect(await outbox.readCursor()).toBe(1_203);
      expect(await outbox.listActive()).toHaveLength(1_203);
      // Nothing new, the cursor never backwards.
      expect(await outbox.createDeliveries(records.slice(0, 600), 600)).toEqual([]);
      expect(await outbox.readCursor()).toBe(1_203);
      await outbox.close();
    });

    if (harness.reopen) {
      const reopen = harness.reopen;
      it("keeps every record, state, cursor and removal across a restart", async () => {
        let outbox = await harness.open();
        const records = Array.from({ length: 300 }, (_, i) => makeDelivery(i + 1, i % 2 ? "a" : "b"));
        await outbox.createDeliveries(records, 300);
        await outbox.saveDeliveries([{ ...(records[0] as DeliveryRecord), state: "dead", updatedAt: 1 }]);
        await outbox.saveDestinationState({ id: "b", paused: true, disabled: false, updatedAt: 3 });
        await outbox.purge(2);
        const before = {
          cursor: await outbox.readCursor(),
          counts: await outbox.countByState(),
          active: await outbox.listActive(),
          states: await outbox.listDestinationStates(),
        };
        outbox = await reopen(outbox);
        expect(await outbox.readCursor()).toBe(before.cursor);
        expect(await outbox.countByState()).toEqual(before.counts);
        expect(await outbox.listActive()).toEqual(before.active);
        expect(await outbox.listDestinationStates()).toEqual(before.states);
        expect(await outbox.getDelivery((records[0] as DeliveryRecord).eventId, "b")).toBeUndefined();
        await outbox.close();
      });
    }
  });
}
