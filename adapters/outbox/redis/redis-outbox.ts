/**
 * The `redis` outbox driver: the shared outbox (scripted-outbox.ts) on its own ioredis
 * connection, with the store's URL and prefix (the outbox goes with `store.driver`,
 * adapters/outbox/registry.ts). Every instance on the same Redis and prefix shares it, no
 * leader (docs/several-instances.md).
 */
import type { OutboxFactory } from "../../../src/delivery/outbox-contract.ts";
import { openIoredisRunner, resolveRedisUrl } from "../../store/redis/ioredis-runner.ts";
import { createScriptedOutbox } from "./scripted-outbox.ts";

export interface RedisOutboxOptions {
  /** The store's URL. Default: the `REDIS_URL` environment variable. */
  url?: string;
  /** The store's key prefix. Default `gw`. */
  prefix?: string;
}

/** Connects and returns the shared outbox. */
export const redisOutbox: OutboxFactory<RedisOutboxOptions> = async (options) =>
  createScriptedOutbox(await openIoredisRunner({ url: resolveRedisUrl(options.url) }), options);
