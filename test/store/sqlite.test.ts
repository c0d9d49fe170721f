/**
 * The store and outbox conformance suites against the sqlite driver (one database shared by
 * both halves), plus the outbox's restart case on the same directory.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { sqliteOutbox, sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { describeStoreConformance } from "./conformance.ts";
import { testOutboxStore } from "./outbox-conformance.ts";

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
describeStoreConformance("sqlite (retention batches of 2)", async ({ now }) =>
  sqliteStore({ dir: await freshDir(), now, purgeBatchSize: 2 }),
);

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
