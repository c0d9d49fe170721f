/**
 * The SQLite store's group commit (adapters/store/sqlite/group-commit.ts and its writer thread):
 * concurrent writes share one transaction and one WAL sync instead of one each, resolve in call
 * order with the rows each statement changed, are durable (visible to a new connection) when
 * they resolve, and a failing statement rejects its whole transaction, which leaves nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { createGroupCommit } from "../../adapters/store/sqlite/group-commit.ts";
import { StoreUnavailableError } from "../../src/store/contract.ts";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function open() {
  const dir = await mkdtemp(join(tmpdir(), "gw-group-commit-"));
  dirs.push(dir);
  const path = join(dir, "t.db");
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY)");
  const writer = await createGroupCommit({ path, durability: "wal-fdatasync", cacheKiB: 1024, walSizeLimit: 1 << 20 });
  const count = () => (db.prepare("SELECT count(*) AS c FROM t").get() as { c: number }).c;
  return { db, writer, count };
}

it("50 concurrent writes cost one transaction, and resolve in call order once committed and synced", async () => {
  const { db, writer, count } = await open();
  const order: number[] = [];
  const seen: number[] = [];
  const writes = Array.from({ length: 50 }, (_, n) =>
    writer.run([["INSERT INTO t (n) VALUES (?) ON CONFLICT DO NOTHING", [n % 49]]]).then((changes) => {
      order.push(n);
      seen.push(count());
      return changes;
    }),
  );
  const changes = await Promise.all(writes);
  expect(writer.transactions).toBe(1);
  expect(order).toEqual(Array.from({ length: 50 }, (_, n) => n));
  // Every write is in the database when the first one resolves; the 50th hit the 1st's row.
  expect(seen).toEqual(Array(50).fill(49));
  expect(changes.at(-1)).toEqual([0]);
  expect(changes[0]).toEqual([1]);
  await writer.close();
  db.close();
});

it("a failing statement rejects its whole transaction and leaves nothing of it", async () => {
  const { db, writer, count } = await open();
  const results = await Promise.allSettled([
    writer.run([["INSERT INTO t (n) VALUES (?)", [1]]]),
    writer.run([["INSERT INTO missing_table (n) VALUES (?)", [2]]]),
    writer.run([["INSERT INTO t (n) VALUES (?)", [3]]]),
  ]);
  for (const result of results) {
    expect(result.status).toBe("rejected");
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
  }
  expect(count()).toBe(0);
  // The writer goes on after a failed transaction.
  await writer.run([["INSERT INTO t (n) VALUES (?)", [4]]]);
  expect(count()).toBe(1);
  await writer.close();
  await expect(writer.run([["INSERT INTO t (n) VALUES (?)", [5]]])).rejects.toBeInstanceOf(StoreUnavailableError);
  db.close();
});

it("an overwrite of a row drops the earlier overwrite still queued with it, unless a write depending on the row came between", async () => {
  const { db, writer } = await open();
  db.exec(`CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT);
    CREATE TABLE written (k TEXT, v TEXT);
    CREATE TRIGGER kv_insert AFTER INSERT ON kv BEGIN INSERT INTO written VALUES (new.k, new.v); END;
    CREATE TRIGGER kv_update AFTER UPDATE ON kv BEGIN INSERT INTO written VALUES (new.k, new.v); END;`);
  const upsert = "INSERT INTO kv (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v";
  const insertIfNew = "INSERT INTO kv (k, v) VALUES (?, ?) ON CONFLICT (k) DO NOTHING";
  const overwrite = (k: string, v: string) =>
    writer.run([[upsert, [k, v]]], undefined, { rows: [k], overwrites: true });
  const results = await Promise.all([
    overwrite("a", "delivering"),
    overwrite("a", "delivered"),
    overwrite("b", "delivering"),
    writer.run([[insertIfNew, ["b", "created"]]], undefined, { rows: ["b"], overwrites: false }),
    overwrite("b", "delivered"),
  ]);
  expect(writer.transactions).toBe(1);
  // Every write resolved with one count per statement it gave; the dropped one changed 0 rows.
  expect(results).toEqual([[0], [1], [1], [0], [1]]);
  expect(db.prepare("SELECT k, v FROM written ORDER BY rowid").all()).toEqual([
    { k: "a", v: "delivered" },
    { k: "b", v: "delivering" },
    { k: "b", v: "delivered" },
  ]);
  await writer.close();
  db.close();
});
