/** Picks the store driver named by the configuration (Node runtime). */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { StoreDriver } from "../../src/store/contract.ts";

export async function createConfiguredStore(config: StoreConfig): Promise<StoreDriver> {
  switch (config.driver) {
    case "memory": {
      const { createMemoryStore } = await import("../store/memory.ts");
      return createMemoryStore();
    }
    case "disk": {
      const { diskStore } = await import("../store/disk-journal.ts");
      return diskStore({ dir: config.dir });
    }
  }
}
