/**
 * Connection options of the shared store drivers (`redis`, `upstash`) from the config and the
 * environment, plus the outbox and the live hub that go with them (README "Running several
 * instances"). Secrets (URL passwords, the Upstash token) come from the environment.
 */
import type { StoreConfig } from "../../src/config/schema.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import type { JournalHub } from "../../src/events/journal-hub.ts";
import type { StoreDriver } from "../../src/store/contract.ts";

type SharedConfig = Extract<StoreConfig, { driver: "redis" | "upstash" }>;

/** URL, token and prefix of a shared driver; throws naming the missing variable. */
export function sharedStoreOptions(config: SharedConfig) {
  if (config.driver === "redis") {
    const url = config.url ?? process.env.REDIS_URL;
    if (!url) throw new Error("store.url: a redis:// URL, or set REDIS_URL");
    return { url, prefix: config.prefix, token: "" };
  }
  const url = config.url ?? process.env.UPSTASH_REDIS_REST_URL;
  const token = process.env.UPSTASH_REDIS_REST_TOKEN;
  if (!url) throw new Error("store.url: the Upstash REST URL, or set UPSTASH_REDIS_REST_URL");
  if (!token) throw new Error("UPSTASH_REDIS_REST_TOKEN: the Upstash REST token must be set");
  return { url, token, prefix: config.prefix };
}

/** True for the drivers several instances share. */
export function isSharedStore(config: StoreConfig): config is SharedConfig {
  return config.driver === "redis" || config.driver === "upstash";
}

/** The shared outbox of a shared store config. */
export async function createSharedOutbox(config: SharedConfig): Promise<OutboxStore> {
  if (config.driver === "redis") {
    const { redisOutbox } = await import("../store/redis/redis-driver.ts");
    return redisOutbox(sharedStoreOptions(config));
  }
  const { upstashOutbox } = await import("../store/upstash/upstash-driver.ts");
  return upstashOutbox(sharedStoreOptions(config));
}

/** The cross-instance live hub of a shared store config (not started). */
export async function createSharedHub(
  config: SharedConfig,
  store: StoreDriver,
  onError: (error: unknown) => void,
): Promise<JournalHub & { close(): Promise<void> }> {
  if (config.driver === "redis") {
    const { redisHub } = await import("../store/redis/redis-hub.ts");
    return redisHub({ ...sharedStoreOptions(config), store, onError });
  }
  const { upstashHub } = await import("../store/upstash/upstash-driver.ts");
  return upstashHub({ store, pollMs: config.pollMs, onError });
}
