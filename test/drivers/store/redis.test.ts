/** The store conformance suite against the `redis` driver on a real redis-server. */
import { afterAll, beforeAll } from "vitest";
import { redisStore } from "../../../adapters/store/redis/redis-store.ts";
import { testStoreDriver } from "../../conformance/store-conformance.ts";
import { startDurableRedis } from "../../helpers/durable-redis.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let n = 0;

beforeAll(async () => {
  redis = await startDurableRedis();
});
afterAll(async () => {
  await redis?.stop();
});

// A fresh key prefix per test keeps tests apart on one server.
testStoreDriver("redis", ({ now, services }) => redisStore({ url: redis.url, prefix: `t${++n}`, now, services }));
