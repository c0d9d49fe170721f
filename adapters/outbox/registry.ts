/**
 * The outbox drivers (the delivery engine's durable state), by name. The outbox goes with the
 * store: the configured `store.driver` names the outbox driver too, which gets the same options
 * (the disk outbox writes next to the disk journal; the shared `redis` and `upstash` outboxes use
 * the store's connection and key prefix, and `claimDue` leases, README "Running several instances"). Each entry loads one driver that exports
 * one typed `OutboxFactory` (src/delivery/outbox-contract.ts); every driver runs
 * test/conformance/outbox-conformance.ts from test/drivers/outbox/<name>.test.ts. Adding a driver
 * is one line here plus its files.
 */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { OutboxFactory, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { type DriverRegistry, loadDriver } from "../driver-registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: each driver has its own options type
export const outboxDrivers: DriverRegistry<OutboxFactory<any>> = {
  memory: () => import("./memory.ts").then((m) => m.memoryOutbox),
  disk: () => import("./disk/disk-outbox.ts").then((m) => m.diskOutbox),
  redis: () => import("./redis/redis-outbox.ts").then((m) => m.redisOutbox),
  upstash: () => import("./upstash.ts").then((m) => m.upstashOutbox),
};

/** Opens the outbox that goes with the configured store. */
export async function openConfiguredOutbox(config: StoreConfig): Promise<OutboxStore> {
  const { driver, ...options } = config;
  const factory = await loadDriver(outboxDrivers, "outbox", driver);
  return factory(options);
}
