/**
 * The `redis` driver (ioredis over TCP, `redis://` / `rediss://`): typed factories for the store,
 * the shared outbox and the cross-instance live hub, all on one Redis. Several gateway
 * instances pointed at the same Redis and prefix behave as one gateway
 * (README "Running several instances").
 */
import type { OutboxFactory } from "../../../src/delivery/outbox-contract.ts";
import type { StoreFactory } from "../../../src/store/contract.ts";
import { checkPersistence, openIoredisRunner } from "./ioredis-runner.ts";
import { createScriptedOutbox } from "./scripted-outbox.ts";
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

/** The shared outbox on Redis (its own connection; same prefix as the store). */
export const redisOutbox: OutboxFactory<Pick<RedisDriverOptions, "url" | "prefix">> = async (options) =>
  createScriptedOutbox(await openIoredisRunner({ url: options.url }), options);
