/**
 * The outbox lease suite (`claimDue` / `renewLeases`), run against every outbox driver from its
 * test/drivers/outbox/<name>.test.ts beside `testOutboxDriver`: what lets several instances
 * share one outbox without a leader (docs/several-instances.md).
 */
import { describe, expect, it } from "vitest";
import type { OutboxHarness } from "./outbox-conformance.ts";
import { makeDelivery } from "./outbox-conformance.ts";

const LEASE = 30_000;
const T = 5_000_000;

const refOf = (n: number, destinationId: string) => ({
  eventId: makeDelivery(n, destinationId).eventId,
  destinationId,
});

/** Registers the lease cases for one driver. */
export function testOutboxLeases(name: string, harness: OutboxHarness): void {
  describe(`outbox leases: ${name}`, () => {
    it("claims due records once, earliest due first, and not the terminal or future ones", async () => {
      const outbox = await harness.open();
      await outbox.createDeliveries(
        [
          makeDelivery(1, "a", { nextAttemptAt: T - 10 }),
          makeDelivery(2, "a", { nextAttemptAt: T - 20 }),
          makeDelivery(3, "a", { nextAttemptAt: T + 1 }),
          makeDelivery(4, "a", { state: "dead", nextAttemptAt: 0 }),
          makeDelivery(5, "b", { nextAttemptAt: T }),
        ],
        5,
      );
      const first = await outbox.claimDue("one", T, LEASE, 2);
      expect(first.map((r) => `${r.seq}/${r.destinationId}`)).toEqual(["2/a", "1/a"]);
      const second = await outbox.claimDue("two", T, LEASE, 10);
      expect(second.map((r) => `${r.seq}/${r.destinationId}`)).toEqual(["5/b"]);
      expect(await outbox.claimDue("two", T, LEASE, 10)).toEqual([]);
      // Record 3 becomes due; the leased ones stay taken until their lease ends.
      expect((await outbox.claimDue("two", T + 1, LEASE, 10)).map((r) => r.seq)).toEqual([3]);
      await outbox.close();
    });

    it("gives a record whose owner stopped renewing to another owner once the lease ended", async () => {
      const outbox = await harness.open();
      await outbox.createDeliveries([makeDelivery(1, "a", { nextAttemptAt: T })], 1);
      expect(await outbox.claimDue("dead-instance", T, LEASE, 10)).toHaveLength(1);
      expect(await outbox.claimDue("survivor", T + LEASE - 1, LEASE, 10)).toEqual([]);
      const taken = await outbox.claimDue("survivor", T + LEASE, LEASE, 10);
      expect(taken.map((r) => r.seq)).toEqual([1]);
      // The first owner learns that the lease is no longer its own.
      expect(await outbox.renewLeases("dead-instance", [refOf(1, "a")], T + 2 * LEASE)).toEqual([refOf(1, "a")]);
      await outbox.close();
    });

    it("renews leases, keeps them across saves, and releases them with an end in the past", async () => {
      const outbox = await harness.open();
      await outbox.createDeliveries([makeDelivery(1, "a", { nextAttemptAt: T })], 1);
      await outbox.claimDue("one", T, LEASE, 10);
      expect(await outbox.renewLeases("one", [refOf(1, "a")], T + 3 * LEASE)).toEqual([]);
      // A retry saved by the owner keeps the lease: nobody else takes it while it is renewed.
      const record = makeDelivery(1, "a", { state: "failed-retrying", failures: 1, nextAttemptAt: T + 10 });
      await outbox.saveDeliveries([record]);
      expect(await outbox.claimDue("two", T + 2 * LEASE, LEASE, 10)).toEqual([]);
      expect(await outbox.renewLeases("one", [refOf(1, "a")], T)).toEqual([]);
      const taken = await outbox.claimDue("two", T + 10, LEASE, 10);
      expect(taken.map((r) => [r.seq, r.state, r.failures])).toEqual([[1, "failed-retrying", 1]]);
      await outbox.close();
    });

    it("keeps a lease its owner renews while a save of the record is in flight", async () => {
      const outbox = await harness.open();
      await outbox.createDeliveries([makeDelivery(1, "a", { nextAttemptAt: T })], 1);
      await outbox.claimDue("one", T, LEASE, 10);
      // The owner's write of an attempt's outcome and its renewal round run at once (a shared
      // outbox may be holding the record for the write when the renewal comes).
      const record = makeDelivery(1, "a", { state: "failed-retrying", failures: 1, nextAttemptAt: T + 10 });
      const [, lost] = await Promise.all([
        outbox.saveDeliveries([record]),
        outbox.renewLeases("one", [refOf(1, "a")], T + 3 * LEASE),
      ]);
      expect(lost).toEqual([]);
      // The first lease has ended, the renewed one has not: nobody else takes the record.
      expect(await outbox.claimDue("two", T + 2 * LEASE, LEASE, 10)).toEqual([]);
      expect((await outbox.claimDue("two", T + 3 * LEASE, LEASE, 10)).map((r) => r.seq)).toEqual([1]);
      await outbox.close();
    });

    it("never hands a record to two of 20 concurrent claimers", async () => {
      const outbox = await harness.open();
      const records = Array.from({ length: 50 }, (_, i) => makeDelivery(i + 1, "a", { nextAttemptAt: T }));
      await outbox.createDeliveries(records, 50);
      const claims = await Promise.all(
        Array.from({ length: 20 }, (_, i) => outbox.claimDue(`owner-${i}`, T, LEASE, 5)),
      );
      const seqs = claims.flat().map((r) => r.seq);
      expect(seqs).toHaveLength(50);
      expect(new Set(seqs).size).toBe(50);
      await outbox.close();
    });

    it("takes a subject of an ordered destination only through its oldest unfinished record", async () => {
      const outbox = await harness.open();
      await outbox.createDeliveries(
        [
          makeDelivery(1, "a", { subject: "s", nextAttemptAt: T + 100 }),
          makeDelivery(2, "a", { subject: "s", nextAttemptAt: T }),
          makeDelivery(3, "a", { subject: "t", nextAttemptAt: T }),
          makeDelivery(4, "b", { subject: "s", nextAttemptAt: T }),
        ],
        4,
      );
      // Record 2 waits behind record 1 (not due yet); "b" is not ordered; "t" has no older record.
      const first = await outbox.claimDue("one", T, LEASE, 10, ["a"]);
      expect(first.map((r) => `${r.seq}/${r.destinationId}`).sort()).toEqual(["3/a", "4/b"]);
      // Once the head is due, its claimer owns the subject and takes the rest of it too.
      const second = await outbox.claimDue("two", T + 100, LEASE, 10, ["a"]);
      expect(second.map((r) => r.seq).sort()).toEqual([1, 2]);
      await outbox.close();
    });

    it("keeps a subject with its owner while it renews, and frees it when the owner stops", async () => {
      const outbox = await harness.open();
      await outbox.createDeliveries(
        [
          makeDelivery(1, "a", { subject: "s", nextAttemptAt: T }),
          makeDelivery(2, "a", { subject: "s", nextAttemptAt: T }),
        ],
        2,
      );
      expect((await outbox.claimDue("one", T, LEASE, 1, ["a"])).map((r) => r.seq)).toEqual([1]);
      // Record 2 is due and unleased, but subject "s" belongs to "one".
      expect(await outbox.claimDue("two", T, LEASE, 10, ["a"])).toEqual([]);
      // "one" renews its lease on record 1 only: that keeps the subject too.
      expect(await outbox.renewLeases("one", [refOf(1, "a")], T + 3 * LEASE)).toEqual([]);
      expect(await outbox.claimDue("two", T + LEASE, LEASE, 10, ["a"])).toEqual([]);
      expect((await outbox.claimDue("one", T + LEASE, LEASE, 10, ["a"])).map((r) => r.seq)).toEqual([2]);
      // "one" stops renewing: after its leases end, "two" takes the subject from its head.
      const taken = await outbox.claimDue("two", T + 3 * LEASE, LEASE, 10, ["a"]);
      expect(taken.map((r) => r.seq).sort()).toEqual([1, 2]);
      // Finishing every record of a subject frees it for the next record's claimer at once.
      await outbox.saveDeliveries(taken.map((r) => ({ ...r, state: "delivered" as const })));
      await outbox.createDeliveries([makeDelivery(3, "a", { subject: "s", nextAttemptAt: T + 3 * LEASE })], 3);
      expect((await outbox.claimDue("three", T + 3 * LEASE, LEASE, 10, ["a"])).map((r) => r.seq)).toEqual([3]);
      await outbox.close();
    });

    it("creates records leased to the routing owner, except an ordered destination's subjects", async () => {
      const outbox = await harness.open();
      const lease = { owner: "router", until: T + LEASE, ordered: ["b"] };
      const created = await outbox.createDeliveries(
        [
          makeDelivery(1, "a", { nextAttemptAt: T }),
          makeDelivery(2, "a", { subject: undefined, nextAttemptAt: T }),
          makeDelivery(3, "b", { nextAttemptAt: T }),
          makeDelivery(4, "b", { subject: undefined, nextAttemptAt: T }),
          makeDelivery(5, "a", { state: "dead", nextAttemptAt: T }),
        ],
        5,
        lease,
      );
      expect(created.map((r) => `${r.seq}/${r.destinationId}`)).toEqual(["1/a", "2/a", "3/b", "4/b", "5/a"]);
      // The subject of the ordered destination is taken through claimDue; the rest are the router's.
      const claimed = await outbox.claimDue("other", T, LEASE, 10, ["b"]);
      expect(claimed.map((r) => r.seq)).toEqual([3]);
      await outbox.saveDeliveries(claimed.map((r) => ({ ...r, state: "delivered" as const })));
      // A record that exists keeps its lease when it is routed again (another instance's create).
      expect(
        await outbox.createDeliveries([makeDelivery(1, "a", { nextAttemptAt: T })], 5, { owner: "other", until: T }),
      ).toEqual([]);
      expect(await outbox.claimDue("other", T + LEASE - 1, LEASE, 10, ["b"])).toEqual([]);
      // The router renews what it holds; a lease it stops renewing goes to another owner when it ends.
      expect(await outbox.renewLeases("router", [refOf(2, "a")], T + 3 * LEASE)).toEqual([]);
      const taken = await outbox.claimDue("other", T + LEASE, LEASE, 10, ["b"]);
      expect(taken.map((r) => `${r.seq}/${r.destinationId}`).sort()).toEqual(["1/a", "4/b"]);
      expect(await outbox.renewLeases("router", [refOf(1, "a"), refOf(2, "a")], T + 4 * LEASE)).toEqual([
        refOf(1, "a"),
      ]);
      expect(await outbox.renewLeases("other", [refOf(1, "a"), refOf(4, "b")], T + 10 * LEASE)).toEqual([]);
      expect(await outbox.claimDue("other", T + 3 * LEASE, LEASE, 10, ["b"])).toEqual([]);
      expect((await outbox.claimDue("other", T + 4 * LEASE, LEASE, 10, ["b"])).map((r) => r.seq)).toEqual([2]);
      await outbox.close();
    });

    it("creates records with the destinations' states read in the same step (drivers that offer it)", async (ctx) => {
      const outbox = await harness.open();
      if (!outbox.createDeliveriesWithStates) {
        await outbox.close();
        ctx.skip();
        return;
      }
      const lease = { owner: "router", until: T + LEASE };
      // No state saved yet: none read.
      const first = await outbox.createDeliveriesWithStates([makeDelivery(1, "a", { nextAttemptAt: T })], 1, lease);
      expect(first.created.map((r) => `${r.seq}/${r.destinationId}`)).toEqual(["1/a"]);
      expect(first.states).toEqual([]);
      const paused = { id: "a", paused: true, disabled: false, reason: "by hand", updatedAt: T };
      const disabled = { id: "b", paused: false, disabled: true, reason: "too many failures", updatedAt: T + 1 };
      await outbox.saveDestinationState(disabled);
      await outbox.saveDestinationState(paused);
      const second = await outbox.createDeliveriesWithStates(
        [makeDelivery(1, "a", { nextAttemptAt: T }), makeDelivery(2, "a", { nextAttemptAt: T })],
        2,
        lease,
      );
      // Only the new record is created, leased as createDeliveries leases it; the states are the saved ones.
      expect(second.created.map((r) => `${r.seq}/${r.destinationId}`)).toEqual(["2/a"]);
      expect(second.states).toEqual([paused, disabled]);
      expect(await outbox.claimDue("other", T, LEASE, 10)).toEqual([]);
      expect(await outbox.readCursor()).toBe(2);
      expect(await outbox.renewLeases("router", [refOf(1, "a"), refOf(2, "a")], T + 2 * LEASE)).toEqual([]);
      await outbox.close();
    });

    it("reports unknown records as not leased", async () => {
      const outbox = await harness.open();
      expect(await outbox.renewLeases("one", [refOf(9, "a")], T)).toEqual([refOf(9, "a")]);
      await outbox.close();
    });
  });
}
