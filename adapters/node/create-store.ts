/** Picks the store driver named by the configuration (Node runtime). */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import { sharedStoreOptions } from "./shared-store-options.ts";

export async function createConfiguredStore(
  config: StoreConfig,
  onDurabilityWarning?: (message: string) => void,
): Promise<StoreDriver> {
  switch (config.driver) {
    case "memory": {
      const { createMemoryStore } = await import("../store/memory.ts");
      return createMemoryStore();
    }
    case "disk": {
      const { diskStore } = await import("../store/disk-journal.ts");
      return diskStore({ dir: config.dir });
    }
    case "redis": {
      const { redisStore } = await import("../store/redis/redis-driver.ts");
      return redisStore({ ...sharedStoreOptions(config), onDurabilityWarning });
    }
    case "upstash": {
      const { upstashStore } = await import("../store/upstash/upstash-driver.ts");
      return upstashStore(sharedStoreOptions(config));
    }
  }
}
