/**
 * The `redis` store driver (ioredis over TCP, `redis://` / `rediss://`): the scripted store
 * (scripted-store.ts) on one connection. Several gateway instances pointed at the same Redis
 * and prefix behave as one gateway; the outbox (adapters/outbox/redis/) and the live hub
 * (adapters/hub/redis.ts) of the same name share its options (docs/several-instances.md).
 */
import type { StoreFactory, StoreWiring } from "../../../src/store/contract.ts";
import { checkPersistence, openIoredisRunner, resolveRedisUrl } from "./ioredis-runner.ts";
import { migrateRedisStore } from "./redis-migrations.ts";
import { createScriptedStore } from "./scripted-store.ts";

export interface RedisStoreOptions extends StoreWiring {
  /** `redis://host:port` or `rediss://...`. Default: the `REDIS_URL` environment variable. */
  url?: string;
  /** Hash-tag prefix of every key. Default `gw`. */
  prefix?: string;
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Told once at open when Redis could lose acknowledged events (its persistence settings). */
  warn?: (message: string) => void;
}

/**
 * The store driver on Redis; checks the server's persistence settings on open, and migrates the
 * key layout to this release's version (a layout from a newer release is refused).
 */
export const redisStore: StoreFactory<RedisStoreOptions> = async (options) => {
  const runner = await openIoredisRunner({ url: resolveRedisUrl(options.url) });
  if (options.warn) {
    const warning = await checkPersistence(runner.client);
    if (warning) options.warn(warning);
  }
  try {
    await migrateRedisStore(runner, options.prefix ?? "gw");
  } catch (error) {
    await runner.close();
    throw error;
  }
  return createScriptedStore(runner, options);
};
