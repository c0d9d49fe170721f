/**
 * Config of the shared drivers (several instances on one PostgreSQL or Redis;
 * docs/several-instances.md): the stores `postgres` (pg), `redis` (TCP, ioredis) and `upstash`
 * (REST), and the live hubs of the same names, which read that store's journal. The PostgreSQL
 * URL may come from `DATABASE_URL`. Secrets stay in the environment: the Redis URL
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
  v.strictObject({
    driver: v.literal("postgres"),
    /** `postgres://` or `postgresql://` URL (use `${DATABASE_URL}`). Default: the `DATABASE_URL` environment variable. */
    url: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, "a postgres:// or postgresql:// URL"))),
    /** The schema holding the gateway's tables (created when missing); instances with the same database and schema form one gateway. Default `gateway`. */
    schema: v.optional(
      v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case identifier (max 63)")),
      "gateway",
    ),
    /** Connections per pool; the store, the outbox and the hub each keep one pool. Default 10. */
    poolSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 10),
    /** TLS as the `pg` client takes it: `true`, or options (`ca`, `cert`, `key` as PEM text, `rejectUnauthorized`, `servername`). The URL's `sslmode` works too. */
    ssl: v.optional(
      v.union([
        v.boolean(),
        v.strictObject({
          rejectUnauthorized: v.optional(v.boolean()),
          ca: v.optional(v.string()),
          cert: v.optional(v.string()),
          key: v.optional(v.string()),
          servername: v.optional(v.string()),
        }),
      ]),
    ),
    leaseSeconds,
  }),
] as const;

/** Event log poll period behind the wake-ups, ms (redis and postgres: default 1000, behind pub/sub or LISTEN/NOTIFY; upstash: default 100, no pub/sub over REST). */
const pollMs = v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(10_000)));

/** The `hub` variants of the shared drivers; each reads the event log of the store of its name. */
export const SharedHubConfigSchemas = [
  v.strictObject({ driver: v.literal("redis"), pollMs }),
  v.strictObject({ driver: v.literal("upstash"), pollMs }),
  v.strictObject({ driver: v.literal("postgres"), pollMs }),
] as const;

const SHARED_DRIVERS: ReadonlySet<string> = new Set(["redis", "upstash", "postgres"]);

/**
 * The hub of a config without `hub`: the shared store's own (so every instance's subscribers
 * see every instance's events), else `in-process`.
 */
export function defaultHubDriver(storeDriver: string): "redis" | "upstash" | "postgres" | "in-process" {
  return SHARED_DRIVERS.has(storeDriver) ? (storeDriver as "redis" | "upstash" | "postgres") : "in-process";
}

/** Why `hub.driver` cannot go with `store.driver` (a shared hub reads its own store's event log), or undefined. */
export function hubStoreMismatch(hubDriver: string, storeDriver: string): string | undefined {
  if (!SHARED_DRIVERS.has(hubDriver) || hubDriver === storeDriver) return undefined;
  return `"in-process" or "${defaultHubDriver(storeDriver)}": hub "${hubDriver}" reads the journal of store.driver "${hubDriver}" (store.driver is "${storeDriver}")`;
}
