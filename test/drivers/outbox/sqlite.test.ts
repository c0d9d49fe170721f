/**
 * The outbox conformance suite against the sqlite driver's outbox half in both durability modes
 * (with the restart case on the same directory), and the wiring the registries promise: the store
 * and the outbox opened from one configuration (`disk` being an alias of `sqlite`) are one
 * database, which closes when both halves are closed.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openConfiguredOutbox } from "../../../adapters/outbox/registry.ts";
import { openConfiguredStore } from "../../../adapters/store/registry.ts";
import { type SqliteStorageOptions, sqliteOutbox } from "../../../adapters/store/sqlite/sqlite-storage.ts";
import type { OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { builtinServices } from "../../../src/services/registry.ts";
import { makeDelivery, testOutboxDriver } from "../../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../../conformance/outbox-lease-conformance.ts";
import { keyOf, makeRecord } from "../../store/sample-records.ts";

const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "gw-sqlite-outbox-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A harness opening the outbox with `options`, reopening on the same directory. */
function harness(options: Omit<SqliteStorageOptions, "dir">) {
  const dirOf = new WeakMap<OutboxStore, string>();
  return {
    async open() {
      const dir = await freshDir();
      const outbox = await sqliteOutbox({ dir, ...options });
      dirOf.set(outbox, dir);
      return outbox;
    },
    async reopen(outbox: OutboxStore) {
      const dir = dirOf.get(outbox) as string;
      await outbox.close();
      const again = await sqliteOutbox({ dir, ...options });
      dirOf.set(again, dir);
      return again;
    },
  };
}

testOutboxDriver("sqlite", harness({ purgeBatchSize: 2 }));
testOutboxDriver("sqlite (durability full)", harness({ durability: "full" }));
testOutboxLeases("sqlite", harness({}));

describe("sqlite through the registries", () => {
  it("opens the store and the outbox of one configuration on one database", async () => {
    const dir = await freshDir();
    const store = await openConfiguredStore({ driver: "sqlite", dir }, { services: builtinServices });
    // `disk` (the old driver's name) opens the same sqlite database, joining the store's.
    const outbox = await openConfiguredOutbox({ driver: "disk", dir });
    await expect(sqliteOutbox({ dir })).rejects.toThrow(/already open in this process/);

    const record = makeRecord(1);
    const { seq } = await store.append(record, keyOf(record), 60_000);
    await outbox.createDeliveries([makeDelivery(seq, "crm", { eventId: record.id })], seq);
    // The database stays open while one half still uses it.
    await store.close();
    await outbox.saveDeliveries([makeDelivery(seq, "crm", { eventId: record.id, state: "delivered" })]);
    await outbox.close();

    const files = await readdir(dir);
    expect(files).toContain("gateway.db");
    expect(files.filter((file) => file.endsWith(".log"))).toEqual([]);
    const db = new Database(join(dir, "gateway.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT id FROM events").pluck().all()).toEqual([record.id]);
      expect(db.prepare("SELECT count(*) FROM deliveries").pluck().get()).toBe(1);
    } finally {
      db.close();
    }
    // Closed by its last user: the directory opens again.
    const again = await openConfiguredStore({ driver: "disk", dir }, { services: builtinServices });
    expect(await again.get(record.id)).toEqual({ ...record, seq });
    await again.close();
  });

  it("names the registered drivers and the alias when the name is unknown", async () => {
    await expect(openConfiguredStore({ driver: "tape" } as never, { services: builtinServices })).rejects.toThrow(
      'no store driver "tape"; registered: memory, sqlite, redis, upstash, postgres, disk (alias)',
    );
  });
});
