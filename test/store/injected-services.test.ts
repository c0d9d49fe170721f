/**
 * The store indexes an event's external id where the services it was handed say
 * (`StoreWiring`, issue 33 row 7), not where the built-in registry says: a gateway configured
 * with its own services gets its own search fields, and a store opened without services
 * indexes no external id. Checked on the memory driver and the sqlite driver (SQL columns).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memoryStore } from "../../adapters/store/memory.ts";
import { sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { esignService } from "../../src/services/esign/esign-service.ts";
import { builtinServices, createServiceRegistry } from "../../src/services/registry.ts";
import type { ServiceRegistry } from "../../src/services/service-contract.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

/** The e-sign service with its external id somewhere else. */
const relocated = createServiceRegistry([{ ...esignService, searchFields: { externalId: ["data.deal_ref"] } }]);

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const drivers: [string, (services: ServiceRegistry | undefined) => Promise<StoreDriver>][] = [
  ["memory", async (services) => memoryStore({ services })],
  [
    "sqlite",
    async (services) => {
      const dir = await mkdtemp(join(tmpdir(), "gw-services-"));
      dirs.push(dir);
      return sqliteStore({ dir, services });
    },
  ],
];

describe.each(drivers)("%s store: the external id comes from the injected services", (_name, open) => {
  const record = makeRecord(1, { data: { external_id: "top-level", data: { deal_ref: "deal-7" } } });
  const idsOf = async (store: StoreDriver, externalId: string) =>
    (await store.list({ externalId, limit: 10 })).events.map((event) => event.id);

  const withRecord = async (services: ServiceRegistry | undefined, check: (store: StoreDriver) => Promise<void>) => {
    const store = await open(services);
    try {
      await store.append(record, keyOf(record), 60_000);
      await check(store);
    } finally {
      await store.close();
    }
  };

  it("reads the path the built-in services declare", async () => {
    await withRecord(builtinServices, async (store) => {
      expect(await idsOf(store, "top-level")).toEqual([record.id]);
      expect(await idsOf(store, "deal-7")).toEqual([]);
    });
  });

  it("reads the path a registry of the caller's declares instead", async () => {
    await withRecord(relocated, async (store) => {
      expect(await idsOf(store, "deal-7")).toEqual([record.id]);
      expect(await idsOf(store, "top-level")).toEqual([]);
    });
  });

  it("indexes no external id when opened without services (other filters still work)", async () => {
    await withRecord(undefined, async (store) => {
      expect(await idsOf(store, "top-level")).toEqual([]);
      expect(await idsOf(store, "deal-7")).toEqual([]);
      expect((await store.list({ sourceId: "esign", limit: 10 })).events.map((event) => event.id)).toEqual([record.id]);
    });
  });
});
