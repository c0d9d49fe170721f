/**
 * The store drivers, by the name `store.driver` takes in the configuration (README,
 * "Architecture", "Add a store driver"). Each entry loads one driver that exports one typed
 * `StoreFactory` (src/store/contract.ts); every driver runs test/conformance/store-conformance.ts
 * from test/drivers/store/<name>.test.ts. Adding a driver is one line here plus its files (and its
 * options in `StoreConfigSchema`, src/config/schema.ts).
 */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { StoreDriver, StoreFactory } from "../../src/store/contract.ts";
import { type DriverRegistry, loadDriver } from "../driver-registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: each driver has its own options type
export const storeDrivers: DriverRegistry<StoreFactory<any>> = {
  memory: () => import("./memory.ts").then((m) => m.memoryStore),
  disk: () => import("./disk/disk-store.ts").then((m) => m.diskStore),
  redis: () => import("./redis/redis-store.ts").then((m) => m.redisStore),
  upstash: () => import("./upstash/upstash-store.ts").then((m) => m.upstashStore),
};

/** What a store driver gets besides its configured options. */
export interface StoreOpenContext {
  /** Told about a risk found while opening (e.g. Redis persistence settings that can lose acknowledged events). */
  warn?(message: string): void;
}

/** Opens the store the configuration names, with the rest of `config` as its options. */
export async function openConfiguredStore(config: StoreConfig, context: StoreOpenContext = {}): Promise<StoreDriver> {
  const { driver, ...options } = config;
  const factory = await loadDriver(storeDrivers, "store", driver);
  return factory({ ...options, warn: context.warn });
}
