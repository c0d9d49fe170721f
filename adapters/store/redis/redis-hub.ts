/**
 * The cross-instance live hub on Redis: the journal hub (src/events/journal-hub.ts) woken by
 * Redis pub/sub. Each append is announced on one channel; every instance, on a message, reads
 * the journal after its cursor. Pub/sub is at-most-once, so it only shortens the wait: the
 * data always comes from the journal, and a poll catches up after a lost message.
 */
import { createJournalHub, type JournalHub } from "../../../src/events/journal-hub.ts";
import type { StoreDriver } from "../../../src/store/contract.ts";
import { createClient } from "./ioredis-runner.ts";
import { createKeyLayout } from "./redis-keys.ts";

export interface RedisHubOptions {
  url: string;
  /** The store's key prefix. Default `gw`. */
  prefix?: string;
  store: Pick<StoreDriver, "readAfter" | "lastSeq">;
  /** Poll period behind pub/sub, ms. Default 1000. */
  pollIntervalMs?: number;
  onError(error: unknown): void;
}

/** A hub with a `close` that also ends its two Redis connections. */
export interface RedisHub extends JournalHub {
  close(): Promise<void>;
}

/** Connects the publisher and the subscriber and returns the (not yet started) hub. */
export async function redisHub(options: RedisHubOptions): Promise<RedisHub> {
  const channel = createKeyLayout(options.prefix ?? "gw").wakeChannel;
  const publisher = createClient(options.url, 5_000);
  const subscriber = createClient(options.url, 5_000, true);
  publisher.on("error", () => {});
  subscriber.on("error", () => {});
  await Promise.all([publisher.connect(), subscriber.connect()]);
  const hub = createJournalHub({
    store: options.store,
    pollIntervalMs: options.pollIntervalMs ?? 1000,
    onError: options.onError,
    announce: (seq) => {
      publisher.publish(channel, String(seq)).catch(() => {});
    },
  });
  subscriber.on("message", () => hub.wake());
  // After a reconnect ioredis re-subscribes; reading at once catches what was missed meanwhile.
  subscriber.on("ready", () => hub.wake());
  await subscriber.subscribe(channel);
  return {
    ...hub,
    async close() {
      hub.stop();
      await Promise.all([publisher.quit().catch(() => {}), subscriber.quit().catch(() => {})]);
    },
  };
}
