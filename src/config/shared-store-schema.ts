/**
 * Config of the shared drivers (several instances on one Redis; README "Running several
 * instances"): the stores `redis` (TCP, ioredis) and `upstash` (REST), and the live hubs of the
 * same names, which read that store's journal. Secrets stay in the environment: the Redis URL
 * may come from `REDIS_URL`, the Upstash URL and token from `UPSTASH_REDIS_REST_URL` /
 * `UPSTASH_REDIS_REST_TOKEN`. The outbox goes with the store and takes the same options
 * (adapters/outbox/registry.ts).
 */
import * as v from "valibot";

const prefix = v.optional(
  v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,32}$/, "letters, digits, _ or - (max 32)")),
  "gw",
);
/** Seconds a claimed delivery stays leased to an instance that stopped renewing. Default 30. */
const leaseSeconds = v.optional(v.pipe(v.number(), v.minValue(0.5), v.maxValue(600)), 30);

/** The `store` variants of the shared drivers. */
export const SharedStoreConfigSchemas = [
  v.strictObject({
    driver: v.literal("redis"),
    /** `redis://` or `rediss://` URL (use `${REDIS_URL}`). Default: the `REDIS_URL` environment variable. */
    url: v.optional(v.pipe(v.string(), v.regex(/^rediss?:\/\//, "a redis:// or rediss:// URL"))),
    /** Hash tag of every key (`{gw}:...`); instances with the same Redis and prefix form one gateway. Default `gw`. */
    prefix,
    leaseSeconds,
  }),
  v.strictObject({
    driver: v.literal("upstash"),
    /** REST URL. Default: the `UPSTASH_REDIS_REST_URL` environment variable (the token always comes from `UPSTASH_REDIS_REST_TOKEN`). */
    url: v.optional(v.pipe(v.string(), v.url("the REST URL of the database"))),
    prefix,
    leaseSeconds,
  }),
] as const;

/** Journal poll period behind the wake-ups, ms (redis: default 1000, behind pub/sub; upstash: default 100, no pub/sub over REST). */
const pollMs = v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(10_000)));

/** The `hub` variants of the shared drivers; each reads the journal of the store of its name. */
export const SharedHubConfigSchemas = [
  v.strictObject({ driver: v.literal("redis"), pollMs }),
  v.strictObject({ driver: v.literal("upstash"), pollMs }),
] as const;

const SHARED_DRIVERS: ReadonlySet<string> = new Set(["redis", "upstash"]);

/**
 * The hub of a config without `hub`: the shared store's own (so every instance's subscribers
 * see every instance's events), else `in-process`.
 */
export function defaultHubDriver(storeDriver: string): "redis" | "upstash" | "in-process" {
  return SHARED_DRIVERS.has(storeDriver) ? (storeDriver as "redis" | "upstash") : "in-process";
}

/** Why `hub.driver` cannot go with `store.driver` (a shared hub reads its own store's journal), or undefined. */
export function hubStoreMismatch(hubDriver: string, storeDriver: string): string | undefined {
  if (!SHARED_DRIVERS.has(hubDriver) || hubDriver === storeDriver) return undefined;
  return `"in-process" or "${defaultHubDriver(storeDriver)}": hub "${hubDriver}" reads the journal of store.driver "${hubDriver}" (store.driver is "${storeDriver}")`;
}
