/**
 * The outbox drivers (the delivery engine's durable state), by name. The outbox goes with the
 * store: the configured `store.driver` names the outbox driver too, which gets the same options.
 * The sqlite outbox lives in the sqlite store's database: its factory is the outbox half of
 * adapters/store/sqlite/sqlite-storage.ts, and opening the store and the outbox on one directory
 * joins the one database (and its one group commit). `disk` is an alias of `sqlite`, as for the
 * store (adapters/store/registry.ts). The shared `redis` and `upstash` outboxes use the store's
 * connection and key prefix, and `claimDue` leases (docs/several-instances.md). Each
 * entry loads one driver that exports one typed `OutboxFactory` (src/delivery/outbox-contract.ts);
 * every driver runs
 * test/conformance/outbox-conformance.ts from test/drivers/outbox/<name>.test.ts. Adding a driver
 * is one line here plus its files.
 */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { OutboxFactory, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import type { Logger } from "../../src/ops/logger.ts";
import { type DriverAliases, type DriverRegistry, loadDriver } from "../driver-registry.ts";

// biome-ignore lint/suspicious/noExplicitAny: each driver has its own options type
export const outboxDrivers: DriverRegistry<OutboxFactory<any>> = {
  memory: () => import("./memory.ts").then((m) => m.memoryOutbox),
  sqlite: () => import("../store/sqlite/sqlite-storage.ts").then((m) => m.sqliteOutbox),
  redis: () => import("./redis/redis-outbox.ts").then((m) => m.redisOutbox),
  upstash: () => import("./upstash.ts").then((m) => m.upstashOutbox),
  postgres: () => import("./postgres/postgres-outbox.ts").then((m) => m.postgresOutbox),
};

/** Earlier names of outbox drivers, the same as the store's (the outbox is picked by `store.driver`). */
export const outboxDriverAliases: DriverAliases = { disk: "sqlite" };

/** Opens the outbox that goes with the configured store; `context.logger` gets its start-up reports. */
export async function openConfiguredOutbox(
  config: StoreConfig,
  context: { logger?: Logger } = {},
): Promise<OutboxStore> {
  const { driver, ...options } = config;
  const factory = await loadDriver(outboxDrivers, "outbox", driver, outboxDriverAliases);
  return factory({ ...options, ...context });
}
