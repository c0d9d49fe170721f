/**
 * The disk journal's write path under load: compaction (survivors readable at their new offsets,
 * marks of purged events kept, seq floor), appends concurrent with a purge, and group commit.
 */
import { stat } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { AppendResult, StoreDriver } from "../../src/store/contract.ts";
import {
  appendRecord,
  createClock,
  createTempDirs,
  journalPath,
  openStore,
  readAll,
  readJournalLines,
  WINDOW,
} from "./disk-journal-helpers.ts";
import { idsOf, keyOf, makeRecord, T0 } from "./sample-records.ts";

/** Compacts at every purge that leaves anything dead. */
const ALWAYS_COMPACT = { compactMinDeadBytes: 0, compactMinDeadRatio: 0 };
const HOUR = 3600_000;

const dirs = createTempDirs();
const open: StoreDriver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((store) => store.close()));
  await dirs.removeAll();
});

async function start(dir: string, clock: ReturnType<typeof createClock>) {
  const store = await openStore(dir, clock.now, ALWAYS_COMPACT);
  open.push(store);
  return store;
}

describe("disk journal: compaction", () => {
  it("rewrites the file, keeps survivors readable, and keeps in-window marks of purged events", async () => {
    const dir = await dirs.make();
    const clock = createClock();
    let store = await start(dir, clock);
    const records = Array.from({ length: 50 }, (_, i) =>
      makeRecord(i + 1, { sourceId: i % 2 ? "staffing" : "esign", receivedAt: T0 + i * 1000 }),
    );
    for (const record of records.slice(0, 25)) await appendRecord(store, record);
    await Promise.all(records.slice(25).map((record) => appendRecord(store, record)));
    await store.kvSet("token:esign", "eyJ.abc", HOUR);
    const sizeBefore = (await stat(journalPath(dir))).size;

    expect(await store.purge(T0 + 30_000)).toBe(30);
    expect((await stat(journalPath(dir))).size).toBeLessThan(sizeBefore * 0.6);
    const survivors = records.slice(30);
    const check = async (s: StoreDriver) => {
      expect(idsOf(await readAll(s))).toEqual(idsOf(survivors));
      for (const record of survivors) expect((await s.get(record.id))?.event).toEqual(record.event);
      const page = await s.list({ limit: 7, sourceId: "staffing" });
      const staffing = survivors.filter((r) => r.sourceId === "staffing").reverse();
      expect(idsOf(page.events)).toEqual(idsOf(staffing.slice(0, 7)));
      const rest = await s.list({ limit: 7, sourceId: "staffing", after: page.next ?? undefined });
      expect([...idsOf(page.events), ...idsOf(rest.events)]).toEqual(idsOf(staffing));
      for (const record of records) {
        expect(await s.claim(keyOf(record), 30_000)).toEqual({ status: "duplicate", id: record.id });
      }
      expect(await s.kvGet("token:esign")).toBe("eyJ.abc");
    };
    await check(store);
    const lines = await readJournalLines(dir);
    expect(lines.filter((l) => "e" in l.entry)).toHaveLength(20);
    expect(lines.filter((l) => "m" in l.entry)).toHaveLength(30);
    // Every copied line is its own batch: damage inside it can never pass as a torn write.
    for (const line of lines) expect(line.batch).toBe(line.offset);

    await store.close();
    store = await start(dir, clock);
    await check(store);

    // Once the window is over, the next compaction drops the marks of purged events for good.
    clock.advance(WINDOW);
    await store.purge(clock.now() - WINDOW + 40_000);
    await store.close();
    store = await start(dir, clock);
    expect(await store.claim(keyOf(records[0]!), 30_000)).toEqual({ status: "claimed" });
    expect(idsOf(await readAll(store))).toEqual(idsOf(records.slice(40)));
  });

  it("continues the seq after every event was purged and the journal compacted", async () => {
    const dir = await dirs.make();
    const clock = createClock();
    let store = await start(dir, clock);
    for (let i = 1; i <= 5; i++) await appendRecord(store, makeRecord(i));
    const lastSeq = await store.lastSeq();
    expect(await store.purge(T0 + 1)).toBe(5);
    expect(await readAll(store)).toEqual([]);
    await store.close();
    store = await start(dir, clock);
    expect(await store.lastSeq()).toBe(lastSeq);
    expect((await appendRecord(store, makeRecord(6, { receivedAt: T0 + 10 }))).seq).toBe(lastSeq + 1);
  });

  it("lands every append issued while purges compact the journal", async () => {
    const dir = await dirs.make();
    const clock = createClock();
    let store = await start(dir, clock);
    const old = Array.from({ length: 300 }, (_, i) => makeRecord(i + 1, { receivedAt: T0 + (i % 3) }));
    await Promise.all(old.map((record) => appendRecord(store, record)));

    const fresh = Array.from({ length: 2000 }, (_, i) => makeRecord(1000 + i, { receivedAt: T0 + HOUR + i }));
    const appends: Promise<AppendResult>[] = [];
    let next = 0;
    const issue = (n: number) => {
      for (const end = Math.min(next + n, fresh.length); next < end; next++) {
        appends.push(appendRecord(store, fresh[next]!));
      }
    };
    // Three purges, each with appends issued before it, in its tick, and on every turn of the
    // event loop until it finished, so lines land before, during and after each compaction.
    for (let round = 0; round < 3; round++) {
      issue(20);
      let done = false;
      const purged = store.purge(T0 + 1 + round).finally(() => {
        done = true;
      });
      issue(20);
      while (!done && next < fresh.length) {
        await new Promise((resolve) => setImmediate(resolve));
        issue(5);
      }
      expect(await purged).toBe(100);
    }
    issue(20);
    const results = await Promise.all(appends);
    expect(results.every((r) => r.inserted)).toBe(true);
    const expected = idsOf(fresh.slice(0, next));
    expect(idsOf(await readAll(store))).toEqual(expected);
    await store.close();
    store = await start(dir, clock);
    const reopened = await readAll(store);
    expect(idsOf(reopened)).toEqual(expected);
    expect(reopened.map((r) => r.seq)).toEqual(results.map((r) => r.seq));
  });
});

describe("disk journal: group commit", () => {
  it("resolves 500 concurrent appends with few batches, all readable after reopen", async () => {
    const dir = await dirs.make();
    const clock = createClock();
    let store = await start(dir, clock);
    const records = Array.from({ length: 500 }, (_, i) => makeRecord(i + 1, { receivedAt: T0 + i }));
    const results = await Promise.all(records.map((record) => appendRecord(store, record)));
    expect(new Set(results.map((r) => r.seq)).size).toBe(500);
    const batches = new Set((await readJournalLines(dir)).map((line) => line.batch));
    expect(batches.size).toBeLessThan(10);
    await store.close();
    store = await start(dir, clock);
    const all = await readAll(store);
    expect(idsOf(all)).toEqual(idsOf(records));
    expect(all.map((r) => r.seq)).toEqual(results.map((r) => r.seq));
  });
});
