/**
 * The `redis` driver (ioredis over TCP, `redis://` / `rediss://`): typed factories for the store,
 * the shared outbox and the cross-instance live hub, all on one Redis. Several gateway
 * instances pointed at the same Redis and prefix behave as one gateway
 * (README "Running several instances").
 */
import type { StoreDriver, StoreFactory } from "../../../src/store/contract.ts";
import { checkPersistence, type IoredisRunner, openIoredisRunner } from "./ioredis-runner.ts";
import { createScriptedStore } from "./scripted-store.ts";

export interface RedisDriverOptions {
  /** `redis://host:port` or `rediss://...`. */
  url: string;
  /** Hash-tag prefix of every key. Default `gw`. */
  prefix?: string;
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Told once at start when Redis could lose acknowledged events (persistence settings). */
  onDurabilityWarning?: (message: string) => void;
}

/** The store driver on Redis; checks the server's persistence settings on open. */
export const redisStore: StoreFactory<RedisDriverOptions> = async (options) => {
  const runner = await openIoredisRunner({ url: options.url });
  if (options.onDurabilityWarning) {
    const warning = await checkPersistence(runner.client);
    if (warning) options.onDurabilityWarning(warning);
  }
  return createScriptedStore(runner, options);
};

/** Opens a runner (connection) of its own for one component. */
export function openRedisRunner(options: Pick<RedisDriverOptions, "url">): Promise<IoredisRunner> {
  return openIoredisRunner({ url: options.url });
}

export type { StoreDriver };
