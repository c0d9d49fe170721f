/**
 * The `redis` live hub driver: the shared live hub (src/stream/journal-hub.ts) over the `redis`
 * store, woken by Redis pub/sub. Each local append is announced on one channel; every instance,
 * on a message, reads the event log after its cursor. Pub/sub is at-most-once, so it only shortens
 * the wait: the data always comes from the event log, and a poll catches up after a lost message
 * (docs/several-instances.md). Picked by default with `store.driver: "redis"`, whose
 * connection options it shares (adapters/hub/registry.ts).
 */
import type { StoreDriver } from "../../src/store/contract.ts";
import type { HubFactory } from "../../src/stream/hub-contract.ts";
import { openJournalHub } from "../../src/stream/journal-hub.ts";
import { createClient, resolveRedisUrl } from "../store/redis/ioredis-runner.ts";
import { createKeyLayout } from "../store/redis/redis-keys.ts";

export interface RedisHubOptions {
  /** The store's URL. Default: the `REDIS_URL` environment variable. */
  url?: string;
  /** The store's key prefix. Default `gw`. */
  prefix?: string;
  /** The `redis` store on the same Redis and prefix. */
  journal: Pick<StoreDriver, "readAfter" | "lastSeq">;
  /** Poll period behind pub/sub, ms. Default 1000. */
  pollMs?: number;
  /** Told when an event log read fails. Default: ignored (the next poll retries). */
  onError?(error: unknown): void;
}

/** Connects the publisher and the subscriber, then starts reading at the event log's end. */
export const redisHub: HubFactory<RedisHubOptions> = async (options) => {
  const url = resolveRedisUrl(options.url);
  const channel = createKeyLayout(options.prefix ?? "gw").wakeChannel;
  const publisher = createClient(url, 5_000);
  const subscriber = createClient(url, 5_000, true);
  // Failed reconnects surface as failed publishes (ignored: the poll covers them).
  publisher.on("error", () => {});
  subscriber.on("error", () => {});
  const quit = async () => {
    await Promise.all([publisher.quit().catch(() => {}), subscriber.quit().catch(() => {})]);
  };
  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
  } catch (error) {
    publisher.disconnect();
    subscriber.disconnect();
    throw error;
  }
  const hub = await openJournalHub({
    journal: options.journal,
    pollIntervalMs: options.pollMs ?? 1000,
    onError: options.onError ?? (() => {}),
    announce: (seq) => {
      publisher.publish(channel, String(seq)).catch(() => {});
    },
    onClose: quit,
  });
  subscriber.on("message", () => hub.wake());
  // After a reconnect ioredis re-subscribes; reading at once catches what was missed meanwhile.
  subscriber.on("ready", () => hub.wake());
  await subscriber.subscribe(channel);
  return hub;
};
