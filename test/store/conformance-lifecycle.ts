/**
 * Conformance: removal of chosen events (per-type retention) and in-place replacement
 * (erasure tombstones), as src/lifecycle uses them: removed events leave every query and index,
 * replaced ones keep their seq and place while their old content leaves every answer.
 */
import { describe, expect, it } from "vitest";
import type { EventRecord } from "../../src/store/contract.ts";
import type { StoreHarness } from "../conformance/store-conformance.ts";
import { idsOf, keyOf, makeRecord, recordId, T0 } from "./sample-records.ts";

const WINDOW = 72 * 3600_000;
const MIN = 60_000;

function log(): EventRecord[] {
  return [
    makeRecord(1, { type: "agreement.sent", subject: "agreements/ag-1", receivedAt: T0 }),
    makeRecord(2, {
      sourceId: "staffing",
      type: "candidate.accepted",
      subject: "staffing-requests/sr_1",
      receivedAt: T0 + MIN,
    }),
    makeRecord(3, { type: "agreement.completed", subject: "agreements/ag-1", receivedAt: T0 + 2 * MIN }),
    makeRecord(4, { type: "agreement.completed", subject: "agreements/ag-2", receivedAt: T0 + 3 * MIN }),
  ];
}

export function describeLifecycleConformance(h: StoreHarness): void {
  const appendAll = async (records: EventRecord[]) => {
    for (const record of records) await h.store.append(record, keyOf(record), WINDOW);
  };
  const ids = async (query: Record<string, string> = {}) =>
    idsOf((await h.store.list({ limit: 100, ...query })).events);

  describe("removeEvents", () => {
    it("removes exactly the named events from get, list, every filter and readAfter; ignores unknown ids", async () => {
      await appendAll(log());
      const last = await h.store.lastSeq();
      expect(await h.store.removeEvents([recordId(2), recordId(4), recordId(99)])).toBe(2);
      expect(await ids()).toEqual([recordId(3), recordId(1)]);
      expect(await ids({ sourceId: "staffing" })).toEqual([]);
      expect(await ids({ type: "agreement.completed" })).toEqual([recordId(3)]);
      expect(await ids({ subject: "agreements/ag-2" })).toEqual([]);
      expect(idsOf(await h.store.readAfter(0, 10))).toEqual([recordId(1), recordId(3)]);
      expect(await h.store.get(recordId(4))).toBeUndefined();
      // seq never goes back, and the removed events' dedupe marks hold for their window.
      expect(await h.store.lastSeq()).toBe(last);
      const removed = log()[3] as EventRecord;
      expect(await h.store.claim(keyOf(removed), 30_000)).toEqual({ status: "duplicate", id: removed.id });
      expect(await h.store.removeEvents([])).toBe(0);
    });
  });

  describe("redactEvents", () => {
    it("replaces content in place: same seq and position, new content in every answer, duplicates still detected", async () => {
      const records = log();
      await appendAll(records);
      const before = await h.store.get(recordId(3));
      const original = records[2] as EventRecord;
      const tombstone: EventRecord = {
        ...original,
        event: { ...original.event, data: null },
        rawBody: "",
        headers: {},
        marks: ["erased"],
      };
      expect(await h.store.redactEvents([tombstone, { ...tombstone, id: recordId(77) }])).toBe(1);
      const after = await h.store.get(recordId(3));
      expect(after?.seq).toBe(before?.seq);
      expect(after?.event.data).toBeNull();
      expect(after?.rawBody).toBe("");
      expect(after?.marks).toEqual(["erased"]);
      expect(await ids()).toEqual([recordId(4), recordId(3), recordId(2), recordId(1)]);
      expect(await ids({ subject: "agreements/ag-1" })).toEqual([recordId(3), recordId(1)]);
      // The external id was in the body: it no longer finds the event.
      expect(await ids({ externalId: "crm-deal-4711" })).toEqual([recordId(4), recordId(1)]);
      const read = (await h.store.readAfter(0, 10)).find((r) => r.id === recordId(3));
      expect(read?.rawBody).toBe("");
      expect(JSON.stringify(await h.store.list({ limit: 10, subject: "agreements/ag-1" }))).not.toContain(
        original.rawBody.slice(0, 40),
      );
      expect(await h.store.claim(keyOf(original), 30_000)).toEqual({ status: "duplicate", id: original.id });
      expect((await h.store.append(original, keyOf(original), WINDOW)).inserted).toBe(false);
      expect((await h.store.get(recordId(3)))?.rawBody).toBe("");
    });
  });
}
