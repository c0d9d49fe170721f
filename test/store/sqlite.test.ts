/**
 * The store and outbox conformance suites against the sqlite driver (one database shared by
 * both halves) in both durability modes, plus the outbox's restart case on the same directory,
 * and what the driver's own WAL sync adds: nothing is visible before it is durable.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteOutbox, sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { describeStoreConformance } from "./conformance.ts";
import { testOutboxStore } from "./outbox-conformance.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "gw-sqlite-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describeStoreConformance("sqlite", async ({ now }) => sqliteStore({ dir: await freshDir(), now }));
describeStoreConformance("sqlite (durability full, retention batches of 2)", async ({ now }) =>
  sqliteStore({ dir: await freshDir(), now, purgeBatchSize: 2, durability: "full" }),
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

const dirOf = new WeakMap<OutboxStore, string>();
testOutboxStore("sqlite", {
  async open() {
    const dir = await freshDir();
    const outbox = await sqliteOutbox({ dir, purgeBatchSize: 2 });
    dirOf.set(outbox, dir);
    return outbox;
  },
  async reopen(outbox) {
    const dir = dirOf.get(outbox) as string;
    await outbox.close();
    const again = await sqliteOutbox({ dir });
    dirOf.set(again, dir);
    return again;
  },
});
