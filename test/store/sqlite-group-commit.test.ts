/**
 * The SQLite store's group commit (adapters/store/sqlite/group-commit.ts): concurrent writes
 * share transactions and WAL syncs instead of one each, nothing resolves before the sync that
 * covers it, writes resolve in call order, and a failing write rejects its whole batch, which
 * leaves nothing in the database.
 */
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { createGroupCommit } from "../../adapters/store/sqlite/group-commit.ts";
import { StoreUnavailableError } from "../../src/store/contract.ts";

const dbs: Database.Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function open() {
  const db = new Database(":memory:");
  dbs.push(db);
  db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY)");
  const syncs: number[] = [];
  let release: (() => void) | undefined;
  const syncWal = () =>
    new Promise<void>((resolve) => {
      syncs.push((db.prepare("SELECT count(*) AS c FROM t").get() as { c: number }).c);
      release = resolve;
    });
  return { db, syncs, syncWal, releaseSync: () => release?.() };
}

it("50 concurrent writes cost one transaction and one sync, and resolve in call order after it", async () => {
  const { db, syncs, syncWal, releaseSync } = open();
  const writer = createGroupCommit(db, syncWal);
  const insert = db.prepare("INSERT INTO t (n) VALUES (?)");
  const order: number[] = [];
  const writes = Array.from({ length: 50 }, (_, n) => writer.run(() => insert.run(n)).then(() => order.push(n)));
  // Wait until the batch committed and its sync started; nothing resolved before the sync returns.
  for (let i = 0; i < 100 && syncs.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(syncs).toEqual([50]);
  expect(order).toEqual([]);
  releaseSync();
  await Promise.all(writes);
  expect(syncs).toEqual([50]);
  expect(order).toEqual(Array.from({ length: 50 }, (_, n) => n));
  const closing = writer.close();
  releaseSync();
  await closing;
});

it("a write that throws rejects its whole batch and leaves nothing of it", async () => {
  const { db, syncWal, releaseSync } = open();
  const writer = createGroupCommit(db, syncWal);
  const insert = db.prepare("INSERT INTO t (n) VALUES (?)");
  const results = await Promise.allSettled([
    writer.run(() => insert.run(1)),
    writer.run(() => {
      throw new Error("disk I/O error");
    }),
    writer.run(() => insert.run(2)),
  ]);
  for (const result of results) {
    expect(result.status).toBe("rejected");
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
  }
  expect((db.prepare("SELECT count(*) AS c FROM t").get() as { c: number }).c).toBe(0);
  const closing = writer.close();
  releaseSync();
  await closing;
});
