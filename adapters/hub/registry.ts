/**
 * The live hub drivers, by the name `hub.driver` takes in the configuration
 * (docs/architecture.md). Each entry loads one driver that exports one typed `HubFactory`
 * (src/stream/hub-contract.ts); every driver runs test/conformance/hub-conformance.ts from
 * test/drivers/hub/<name>.test.ts. Adding a driver is one line here plus its file (and its
 * options in `HubConfigSchema`, src/config/schema.ts).
 */
import type { HubConfig, StoreConfig } from "../../src/config/schema.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import type { HubFactory, LiveHub } from "../../src/stream/hub-contract.ts";
import { type DriverRegistry, loadDriver } from "../driver-registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: each driver has its own options type
export const hubDrivers: DriverRegistry<HubFactory<any>> = {
  "in-process": () => import("./in-process.ts").then((m) => m.inProcessHub),
  redis: () => import("./redis.ts").then((m) => m.redisHub),
  upstash: () => import("./upstash.ts").then((m) => m.upstashHub),
  postgres: () => import("./postgres.ts").then((m) => m.postgresHub),
};

/** What a hub driver gets besides its configured options. */
export interface HubOpenContext {
  /** The opened store: the shared live hubs (`redis`, `upstash`, `postgres`) read its event log. */
  journal: StoreDriver;
  /** The store's configuration: a hub driver named like the store driver shares its options (URL, prefix). */
  store: StoreConfig;
  /** Told when a hub fails to read or reach its backing service. */
  onError?(error: unknown): void;
}

/**
 * Opens the hub the configuration names (the config's default is the shared store's own hub,
 * src/config/shared-store-schema.ts).
 */
export async function openConfiguredHub(config: HubConfig, context: HubOpenContext): Promise<LiveHub> {
  const { driver, ...options } = config;
  const factory = await loadDriver(hubDrivers, "hub", driver);
  const { driver: storeDriver, ...storeOptions } = context.store;
  const shared = storeDriver === driver ? storeOptions : {};
  return factory({ ...shared, ...options, journal: context.journal, onError: context.onError });
}
