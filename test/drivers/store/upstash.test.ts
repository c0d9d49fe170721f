/**
 * The store conformance suite against the `upstash` driver, through an Upstash REST front in
 * front of a real redis-server (the same Lua scripts as the `redis` driver).
 */
import { afterAll, beforeAll } from "vitest";
import { upstashStore } from "../../../adapters/store/upstash/upstash-store.ts";
import { testStoreDriver } from "../../conformance/store-conformance.ts";
import { startDurableRedis } from "../../helpers/durable-redis.ts";
import { startUpstashFront, type UpstashFront } from "../../helpers/upstash-server.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let front: UpstashFront;
let n = 0;

beforeAll(async () => {
  redis = await startDurableRedis();
  front = await startUpstashFront(redis.url);
});
afterAll(async () => {
  await front?.stop();
  await redis?.stop();
});

testStoreDriver("upstash", ({ now, services }) =>
  upstashStore({ url: front.url, token: front.token, prefix: `u${++n}`, now, services }),
);
