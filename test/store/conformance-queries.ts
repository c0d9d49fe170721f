/**
 * Conformance: the event log query (newest first, every filter, exact cursor pagination) and
 * retention (purge by receive time; dedupe marks outlive purged events until their window ends).
 */
import { describe, expect, it } from "vitest";
import type { EventQuery, EventRecord } from "../../src/store/contract.ts";
import type { StoreHarness } from "../conformance/store-conformance.ts";
import { idsOf, keyOf, makeRecord, recordId, T0 } from "./sample-records.ts";

const WINDOW = 72 * 3600_000;
const MIN = 60_000;

/** A mixed log: both services, several types, subjects and both external id placements. */
function mixedLog(): EventRecord[] {
  const esignNestedOnly = { event_id: "evt-n", agreement_id: "ag-3", data: { external_id: "crm-nested" } };
  return [
    makeRecord(1, { type: "agreement.sent", subject: "agreements/ag-1", receivedAt: T0 }),
    makeRecord(2, { type: "agreement.completed", subject: "agreements/ag-1", receivedAt: T0 + MIN }),
    makeRecord(3, {
      type: "agreement.signed",
      subject: "agreements/ag-3",
      data: esignNestedOnly,
      receivedAt: T0 + 2 * MIN,
    }),
    makeRecord(4, {
      sourceId: "staffing",
      type: "candidate.accepted",
      subject: "staffing-requests/sr_1",
      receivedAt: T0 + 3 * MIN,
    }),
    makeRecord(5, {
      sourceId: "staffing",
      type: "staffing.completed",
      subject: "staffing-requests/sr_1",
      receivedAt: T0 + 4 * MIN,
    }),
    makeRecord(6, {
      sourceId: "esign-eu",
      type: "agreement.completed",
      subject: "agreements/ag-6",
      receivedAt: T0 + 5 * MIN,
    }),
    makeRecord(7, { type: "participant.reminded", receivedAt: T0 + 6 * MIN, data: { event_id: "evt-7" } }),
  ];
}

/** Record numbers, newest first, as ids. */
const expected = (...numbers: number[]) => numbers.map(recordId);

export function describeQueryConformance(h: StoreHarness): void {
  const append = (record: EventRecord) => h.store.append(record, keyOf(record), WINDOW);
  const ids = async (query: Omit<EventQuery, "limit">) => idsOf((await h.store.list({ limit: 100, ...query })).events);
  const appendAll = async (records: EventRecord[]) => {
    for (const record of records) await append(record);
  };

  describe("large records", () => {
    it("readAfter, list and their pages return every record whole and in order", async () => {
      // Six records of 400 KiB: a driver may read them in several pieces (the redis driver's scan
      // script ends a page at 1 MiB of records), never skipping or repeating one.
      const note = (n: number) => `${n}:${"x".repeat(400 * 1024)}`;
      const records = Array.from({ length: 6 }, (_, i) =>
        makeRecord(300 + i, { receivedAt: T0 + i * MIN, data: { event_id: `big-${i}`, note: note(i) } }),
      );
      await appendAll(records);
      const notes = (page: EventRecord[]) =>
        page.map((r) => ((r.event as { data?: { note?: string } }).data?.note ?? "").length);
      const after = await h.store.readAfter(0, 10);
      expect(idsOf(after)).toEqual(idsOf(records));
      expect(notes(after)).toEqual(records.map((_, i) => note(i).length));
      expect(JSON.stringify(after[5]?.event)).toBe(JSON.stringify(records[5]?.event));
      expect(idsOf(await h.store.readAfter(after[1]?.seq ?? 0, 3))).toEqual(idsOf(records.slice(2, 5)));
      const newest = [...records].reverse();
      const first = await h.store.list({ limit: 4 });
      expect(idsOf(first.events)).toEqual(idsOf(newest.slice(0, 4)));
      expect(first.next).not.toBeNull();
      const second = await h.store.list({ limit: 4, after: first.next ?? undefined });
      expect(idsOf(second.events)).toEqual(idsOf(newest.slice(4)));
      expect(second.next).toBeNull();
      expect(notes(second.events)).toEqual([note(1).length, note(0).length]);
    });
  });

  describe("list", () => {
    it("lists newest first, each filter alone and combined", async () => {
      await appendAll(mixedLog());
      expect(await ids({})).toEqual(expected(7, 6, 5, 4, 3, 2, 1));
      expect(await ids({ sourceId: "esign" })).toEqual(expected(7, 3, 2, 1));
      expect(await ids({ sourceId: "staffing" })).toEqual(expected(5, 4));
      expect(await ids({ type: "agreement.completed" })).toEqual(expected(6, 2));
      expect(await ids({ type: "agreement.*" })).toEqual(expected(6, 3, 2, 1));
      expect(await ids({ type: "*.completed" })).toEqual(expected(6, 5, 2));
      expect(await ids({ type: "*" })).toEqual(expected(7, 6, 5, 4, 3, 2, 1));
      expect(await ids({ type: "agreement" })).toEqual([]);
      expect(await ids({ subject: "agreements/ag-1" })).toEqual(expected(2, 1));
      expect(await ids({ subject: "staffing-requests/sr_1" })).toEqual(expected(5, 4));
      expect(await ids({ sourceId: "esign", type: "agreement.*", subject: "agreements/ag-1" })).toEqual(expected(2, 1));
    });

    it("filters by external id: e-sign top level, e-sign nested data.external_id, staffing externalId", async () => {
      await appendAll(mixedLog());
      expect(await ids({ externalId: "crm-deal-4711" })).toEqual(expected(6, 2, 1));
      expect(await ids({ externalId: "crm-nested" })).toEqual(expected(3));
      expect(await ids({ externalId: "shift-2026-11-24-night-ward3" })).toEqual(expected(5, 4));
      expect(await ids({ externalId: "unknown" })).toEqual([]);
    });

    it("filters by receive time, from inclusive and to exclusive", async () => {
      await appendAll(mixedLog());
      expect(await ids({ from: T0 + 2 * MIN })).toEqual(expected(7, 6, 5, 4, 3));
      expect(await ids({ to: T0 + 2 * MIN })).toEqual(expected(2, 1));
      expect(await ids({ from: T0 + MIN, to: T0 + 3 * MIN })).toEqual(expected(3, 2));
      expect(await ids({ from: T0 + MIN, to: T0 + MIN })).toEqual([]);
    });

    it("paginates exactly: pages join to the full list, next is null only on the last page", async () => {
      const records = Array.from({ length: 23 }, (_, i) => makeRecord(i + 1, { receivedAt: T0 + i }));
      await appendAll(records);
      for (const limit of [1, 5, 23, 500]) {
        const seen: string[] = [];
        let after: number | undefined;
        for (let pages = 0; pages < 30; pages++) {
          const page = await h.store.list({ limit, after });
          expect(page.events.length).toBeLessThanOrEqual(limit);
          seen.push(...idsOf(page.events));
          if (page.next === null) break;
          expect(page.events).toHaveLength(limit);
          expect(page.next).toBe(page.events[page.events.length - 1]?.seq);
          after = page.next;
        }
        expect(seen).toEqual(idsOf(records).reverse());
      }
    });

    it("paginates a filtered list exactly, also when the page size divides the matches", async () => {
      const records = Array.from({ length: 40 }, (_, i) =>
        makeRecord(i + 1, { sourceId: i % 2 ? "staffing" : "esign", receivedAt: T0 + i }),
      );
      await appendAll(records);
      const staffing = idsOf(records.filter((r) => r.sourceId === "staffing")).reverse();
      const pages: string[][] = [];
      let after: number | undefined;
      for (let n = 0; n < 10; n++) {
        const page = await h.store.list({ limit: 5, sourceId: "staffing", after });
        pages.push(idsOf(page.events));
        if (page.next === null) break;
        after = page.next;
      }
      expect(pages).toHaveLength(4);
      expect(pages.flat()).toEqual(staffing);
    });
  });

  describe("purge", () => {
    it("removes events received before the cutoff and keeps the rest readable", async () => {
      const records = Array.from({ length: 10 }, (_, i) => makeRecord(i + 1, { receivedAt: T0 + i * MIN }));
      await appendAll(records);
      const third = (await h.store.readAfter(0, 100))[2]?.seq ?? 0;
      expect(await h.store.purge(T0 + 4 * MIN)).toBe(4);
      expect(await ids({})).toEqual(idsOf(records.slice(4)).reverse());
      // Also right behind the appends, where a driver may answer from memory.
      expect(idsOf(await h.store.readAfter(0, 100))).toEqual(idsOf(records.slice(4)));
      expect(idsOf(await h.store.readAfter(third, 100))).toEqual(idsOf(records.slice(4)));
      for (const record of records.slice(0, 4)) expect(await h.store.get(record.id)).toBeUndefined();
      for (const record of records.slice(4)) expect((await h.store.get(record.id))?.event).toEqual(record.event);
      expect(await h.store.purge(T0 + 4 * MIN)).toBe(0);
    });

    it("keeps the dedupe marks of purged events until their window ends, then forgets them", async () => {
      const record = makeRecord(1);
      await append(record);
      h.advance(MIN);
      expect(await h.store.purge(h.now())).toBe(1);
      expect(await h.store.claim(keyOf(record), 30_000)).toEqual({ status: "duplicate", id: record.id });
      h.advance(WINDOW);
      await h.store.purge(h.now());
      expect(await h.store.claim(keyOf(record), 30_000)).toEqual({ status: "claimed" });
      const again = await append({ ...record, receivedAt: h.now() });
      expect(again.inserted).toBe(true);
      expect((await h.store.get(record.id))?.receivedAt).toBe(h.now());
    });
  });
}
