/**
 * The `upstash` store driver (`@upstash/redis` over REST): the scripted store of the `redis`
 * driver on the same Lua scripts. URL and token come from the environment
 * (`UPSTASH_REDIS_REST_URL`, `UPSTASH_REDIS_REST_TOKEN`) unless given; the outbox
 * (adapters/outbox/upstash.ts) and the live hub (adapters/hub/upstash.ts) of the same name go
 * with it (docs/several-instances.md).
 */
import type { StoreFactory, StoreWiring } from "../../../src/store/contract.ts";
import { migrateRedisStore } from "../redis/redis-migrations.ts";
import { createScriptedStore } from "../redis/scripted-store.ts";
import { createUpstashRunner, resolveUpstashConnection } from "./upstash-runner.ts";

export interface UpstashStoreOptions extends StoreWiring {
  /** REST URL. Default: `UPSTASH_REDIS_REST_URL`. */
  url?: string;
  /** REST token. Default: `UPSTASH_REDIS_REST_TOKEN` (never from a committed file). */
  token?: string;
  /** Hash-tag prefix of every key. Default `gw`. */
  prefix?: string;
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** The store driver on Upstash; migrates the key layout to this release's version first. */
export const upstashStore: StoreFactory<UpstashStoreOptions> = async (options) => {
  const runner = createUpstashRunner(resolveUpstashConnection(options));
  try {
    await migrateRedisStore(runner, options.prefix ?? "gw");
  } catch (error) {
    await runner.close();
    throw error;
  }
  return createScriptedStore(runner, options);
};
