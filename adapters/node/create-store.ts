/** Picks the store driver named by the configuration (Node runtime). */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { Logger } from "../../src/ops/logger.ts";
import type { StoreDriver } from "../../src/store/contract.ts";

export async function createConfiguredStore(config: StoreConfig, logger?: Logger): Promise<StoreDriver> {
  switch (config.driver) {
    case "memory": {
      const { createMemoryStore } = await import("../store/memory.ts");
      return createMemoryStore();
    }
    case "disk":
    case "sqlite": {
      const { sqliteStore } = await import("../store/sqlite/sqlite-storage.ts");
      return sqliteStore({ dir: config.dir, logger });
    }
  }
}
