/**
 * The store conformance suite against the sqlite driver in both durability modes (the driver's
 * own WAL sync, and SQLite's `synchronous=FULL` with retention in batches of 2), plus what the
 * driver's own WAL sync adds: nothing is visible before it is durable. The outbox half of the
 * same database runs in test/drivers/outbox/sqlite.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteStore } from "../../../adapters/store/sqlite/sqlite-storage.ts";
import { testStoreDriver } from "../../conformance/store-conformance.ts";
import { keyOf, makeRecord } from "../../store/sample-records.ts";

const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "gw-sqlite-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

testStoreDriver("sqlite", async ({ now, services }) => sqliteStore({ dir: await freshDir(), now, services }));
testStoreDriver("sqlite (durability full, retention batches of 2)", async ({ now, services }) =>
  sqliteStore({ dir: await freshDir(), now, services, purgeBatchSize: 2, durability: "full" }),
);

describe("sqlite: committed is not yet acknowledged", () => {
  it("hides an event committed but not yet synced from reads, and keeps its claim until then", async () => {
    const store = await sqliteStore({ dir: await freshDir() });
    const record = makeRecord(1);
    expect(await store.claim(keyOf(record), 30_000)).toEqual({ status: "claimed" });
    const appended = store.append(record, keyOf(record), 60_000);
    // Runs right after the group commit in the same turn of the loop: the transaction is
    // committed and its WAL sync is still running on the thread pool.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.readAfter(0, 10)).toEqual([]);
    expect((await store.list({ limit: 10 })).events).toEqual([]);
    expect(await store.get(record.id)).toBeUndefined();
    expect(await store.lastSeq()).toBe(0);
    expect(await store.claim(keyOf(record), 30_000)).toEqual({ status: "in_progress" });
    const { seq } = await appended;
    expect((await store.readAfter(0, 10)).map((r) => r.seq)).toEqual([seq]);
    expect(await store.claim(keyOf(record), 30_000)).toEqual({ status: "duplicate", id: record.id });
    await store.close();
  });
});

describe("sqlite: events kept in memory only while something reads the log", () => {
  it("reads back from the database when nothing read lately, from memory while a reader follows", async () => {
    let clock = Date.now();
    const store = await sqliteStore({ dir: await freshDir(), now: () => clock });
    const append = async (n: number) => {
      const record = makeRecord(n);
      expect(await store.claim(keyOf(record), 30_000)).toEqual({ status: "claimed" });
      await store.append(record, keyOf(record), 60_000);
      return record.id;
    };
    // A record held in memory is answered as the same object; one read back is parsed anew.
    const held = async (id: string) => {
      const [a, b] = [await store.get(id), await store.get(id)];
      expect(a).toEqual(b);
      expect(a?.id).toBe(id);
      return a === b;
    };
    const first = await append(1);
    expect(await held(first)).toBe(false);
    // The reads above count as a reader: what is appended now stays in memory.
    const second = await append(2);
    expect(await held(second)).toBe(true);
    // A minute and more without a read: appends are no longer kept.
    clock += 61_000;
    const third = await append(3);
    expect(await held(third)).toBe(false);
    const fourth = await append(4);
    expect(await held(fourth)).toBe(true);
    // Whatever memory held, the log reads whole and in order, by seq and by id.
    expect((await store.readAfter(0, 10)).map((r) => r.id)).toEqual([first, second, third, fourth]);
    expect((await store.readAfter(1, 10)).map((r) => r.id)).toEqual([second, third, fourth]);
    expect((await store.readAfter(3, 10)).map((r) => r.id)).toEqual([fourth]);
    await store.close();
  });
});
