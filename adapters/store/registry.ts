/**
 * The store drivers, by the name `store.driver` takes in the configuration
 * (docs/architecture.md#add-a-store-driver). Each entry loads one driver that exports one typed
 * `StoreFactory` (src/store/contract.ts); every driver runs test/conformance/store-conformance.ts
 * from test/drivers/store/<name>.test.ts. Adding a driver is one line here plus its files (and its
 * options in `StoreConfigSchema`, src/config/schema.ts).
 *
 * `disk` is an alias of `sqlite`: the name of the journal store the sqlite store replaced, kept so
 * existing configurations open the new store (which imports the old journal on its first start,
 * adapters/store/sqlite/journal-import/). Only the reading side of the old journal and outbox
 * log lives there, with the import; the old writer is a test fixture (test/store/old-journal/).
 */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { Logger } from "../../src/ops/logger.ts";
import type { ServiceRegistry } from "../../src/services/service-contract.ts";
import type { StoreDriver, StoreFactory } from "../../src/store/contract.ts";
import { type DriverAliases, type DriverRegistry, loadDriver } from "../driver-registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: each driver has its own options type
export const storeDrivers: DriverRegistry<StoreFactory<any>> = {
  memory: () => import("./memory.ts").then((m) => m.memoryStore),
  sqlite: () => import("./sqlite/sqlite-storage.ts").then((m) => m.sqliteStore),
  redis: () => import("./redis/redis-store.ts").then((m) => m.redisStore),
  upstash: () => import("./upstash/upstash-store.ts").then((m) => m.upstashStore),
  postgres: () => import("./postgres/postgres-store.ts").then((m) => m.postgresStore),
};

/** Earlier driver names still accepted in `store.driver`. */
export const storeDriverAliases: DriverAliases = { disk: "sqlite" };

/** What the runtime hands every driver besides its configured options. */
export interface DriverContext {
  /** The gateway's upstream services: the driver indexes the search fields they declare (`StoreWiring`). */
  services: ServiceRegistry;
  /** Where a driver reports what it found at start-up (a recovered WAL, an import). */
  logger?: Logger;
  /** Told about a risk found while opening (e.g. Redis persistence settings that can lose acknowledged events). */
  warn?(message: string): void;
}

/** Opens the store the configuration names, with the rest of `config` (and `context`) as its options. */
export async function openConfiguredStore(config: StoreConfig, context: DriverContext): Promise<StoreDriver> {
  const { driver, ...options } = config;
  const factory = await loadDriver(storeDrivers, "store", driver, storeDriverAliases);
  return factory({ ...options, ...context });
}
