/**
 * Conformance: append (durable result, idempotency on the event id, strictly increasing seq),
 * get, readAfter, lastSeq, ping and close.
 */
import { describe, expect, it } from "vitest";
import type { EventRecord } from "../../src/store/contract.ts";
import type { StoreHarness } from "../conformance/store-conformance.ts";
import { idsOf, keyOf, makeRecord } from "./sample-records.ts";

const WINDOW = 72 * 3600_000;

export function describeAppendConformance(h: StoreHarness): void {
  const append = (record: EventRecord) => h.store.append(record, keyOf(record), WINDOW);

  describe("append and read back", () => {
    it("answers ping and has a name", async () => {
      await expect(h.store.ping()).resolves.toBeUndefined();
      expect(h.store.name).toMatch(/^[a-z0-9-]+$/);
    });

    it("records an event and returns it unchanged apart from the assigned seq", async () => {
      const record = makeRecord(1, {
        sourceId: "staffing",
        type: "candidate.responded",
        subject: "staffing-requests/sr_1",
      });
      record.rawBody = '{"note":"Ja, jag kan ta passet 🌙","\\u2028":"sep"}';
      record.marks = ["extra_fields"];
      const result = await append(record);
      expect(result.inserted).toBe(true);
      expect(result.seq).toBeGreaterThan(0);
      expect(await h.store.get(record.id)).toEqual({ ...record, seq: result.seq });
      expect(await h.store.get("evt_ffffffffffffffffffffffffffffffff")).toBeUndefined();
    });

    it("is idempotent on the event id: a second append inserts nothing and returns the same seq", async () => {
      const record = makeRecord(1);
      const first = await append(record);
      const second = await append({ ...record, receivedAt: record.receivedAt + 5 });
      expect(second).toEqual({ inserted: false, seq: first.seq });
      const page = await h.store.list({ limit: 10 });
      expect(idsOf(page.events)).toEqual([record.id]);
      expect(page.events[0]?.receivedAt).toBe(record.receivedAt);
    });

    it("inserts exactly one of 10 concurrent appends of one id, all answering its seq", async () => {
      const record = makeRecord(1);
      const results = await Promise.all(Array.from({ length: 10 }, () => append(record)));
      expect(results.filter((r) => r.inserted)).toHaveLength(1);
      expect(new Set(results.map((r) => r.seq)).size).toBe(1);
      expect((await h.store.list({ limit: 10 })).events).toHaveLength(1);
    });

    it("assigns strictly increasing seqs, sequentially and concurrently", async () => {
      const first = await append(makeRecord(1));
      const second = await append(makeRecord(2));
      expect(second.seq).toBeGreaterThan(first.seq);
      const concurrent = await Promise.all(Array.from({ length: 50 }, (_, i) => append(makeRecord(10 + i))));
      const seqs = concurrent.map((r) => r.seq);
      expect(new Set(seqs).size).toBe(50);
      expect(Math.min(...seqs)).toBeGreaterThan(second.seq);
      const later = await append(makeRecord(100));
      expect(later.seq).toBeGreaterThan(Math.max(...seqs));
      for (const [i, r] of concurrent.entries()) expect((await h.store.get(makeRecord(10 + i).id))?.seq).toBe(r.seq);
    });

    it("records 200 concurrent claim-and-append pairs of distinct identities", async () => {
      const records = Array.from({ length: 200 }, (_, i) => makeRecord(i + 1));
      const results = await Promise.all(
        records.map(async (record) => {
          expect(await h.store.claim(keyOf(record), 30_000)).toEqual({ status: "claimed" });
          return append(record);
        }),
      );
      expect(results.every((r) => r.inserted)).toBe(true);
      expect(new Set(results.map((r) => r.seq)).size).toBe(200);
      const all = await h.store.readAfter(0, 500);
      expect(new Set(idsOf(all))).toEqual(new Set(idsOf(records)));
    });

    it("reads after a seq in ascending order, limited and filtered", async () => {
      const seqs: number[] = [];
      for (let i = 1; i <= 6; i++) {
        seqs.push((await append(makeRecord(i, { sourceId: i % 2 ? "esign" : "staffing" }))).seq);
      }
      expect(idsOf(await h.store.readAfter(0, 100))).toEqual([1, 2, 3, 4, 5, 6].map((i) => makeRecord(i).id));
      expect(idsOf(await h.store.readAfter(seqs[1] as number, 2))).toEqual([makeRecord(3).id, makeRecord(4).id]);
      expect(idsOf(await h.store.readAfter(seqs[0] as number, 100, { sourceId: "esign" }))).toEqual([
        makeRecord(3).id,
        makeRecord(5).id,
      ]);
      expect(await h.store.readAfter(seqs[5] as number, 100)).toEqual([]);
    });

    it("reports the highest seq recorded, which a purge does not lower", async () => {
      expect(await h.store.lastSeq()).toBe(0);
      await append(makeRecord(1));
      const { seq } = await append(makeRecord(2));
      expect(await h.store.lastSeq()).toBe(seq);
      expect(await h.store.purge(h.now() + 1)).toBe(2);
      expect(await h.store.lastSeq()).toBe(seq);
      expect((await append(makeRecord(3))).seq).toBeGreaterThan(seq);
    });

    it("close lets appends already started finish, is idempotent, and refuses later appends", async () => {
      const pending = Array.from({ length: 20 }, (_, i) => append(makeRecord(i + 1)));
      await h.store.close();
      const results = await Promise.all(pending);
      expect(results.every((r) => r.inserted)).toBe(true);
      await h.store.close();
      await expect(append(makeRecord(99))).rejects.toThrow();
    });
  });
}
