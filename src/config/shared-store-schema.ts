/**
 * Config of the shared store drivers (several instances on one Redis; README "Running several
 * instances"): `redis` (TCP, ioredis) and `upstash` (REST). Secrets stay in the environment:
 * the Redis URL may come from `REDIS_URL`, the Upstash URL and token from
 * `UPSTASH_REDIS_REST_URL` / `UPSTASH_REDIS_REST_TOKEN`.
 */
import * as v from "valibot";

const prefix = v.optional(
  v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,32}$/, "letters, digits, _ or - (max 32)")),
  "gw",
);
/** Seconds a claimed delivery stays leased to an instance that stopped renewing. Default 30. */
const leaseSeconds = v.optional(v.pipe(v.number(), v.minValue(0.5), v.maxValue(600)), 30);

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
    /** Journal poll period of the live stream, ms (the REST API has no pub/sub). Default 100. */
    pollMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(10_000)), 100),
  }),
] as const;
