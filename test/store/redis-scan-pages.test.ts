/**
 * The `redis` store reads the event log in scripts of at most 1 MiB of records (after the first):
 * Redis runs one script at a time, and a page of 200 large records (the hub's and the router's
 * reads after a burst of 1 MiB webhooks) held every other command, every instance's appends
 * included, for up to 3.8 s, so most of the burst got 503. Counted here through Redis's own
 * command statistics; the conformance suite checks the pages' content.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { redisStore } from "../../adapters/store/redis/redis-store.ts";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import { idsOf, keyOf, makeRecord, T0 } from "./sample-records.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let admin: Redis;

beforeAll(async () => {
  redis = await startDurableRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  await admin?.quit();
  await redis?.stop();
});

/** Calls of EVALSHA so far (`INFO commandstats`). */
async function scriptCalls(): Promise<number> {
  const info = await admin.info("commandstats");
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

it("a read of 8 records of about 600 KiB runs as scripts of at most 1 MiB of records, in order and whole", async () => {
  const store = await redisStore({ url: redis.url, prefix: "scan" });
  try {
    const records = Array.from({ length: 8 }, (_, i) =>
      makeRecord(i + 1, { receivedAt: T0 + i, data: { event_id: `big-${i}`, note: `${i}:${"x".repeat(300 * 1024)}` } }),
    );
    for (const record of records) await store.append(record, keyOf(record), 86_400_000);
    await admin.config("RESETSTAT");
    const read = await store.readAfter(0, 100);
    expect(idsOf(read)).toEqual(idsOf(records));
    // A record holds its note twice (event and raw body): two records reach the budget, so four
    // scan scripts (and no other script call).
    expect(await scriptCalls()).toBe(4);
    // Small records still come 200 to a script.
    const small = Array.from({ length: 300 }, (_, i) => makeRecord(100 + i, { receivedAt: T0 + 100 + i }));
    for (const record of small) await store.append(record, keyOf(record), 86_400_000);
    await admin.config("RESETSTAT");
    expect(await store.readAfter(8, 300)).toHaveLength(300);
    expect(await scriptCalls()).toBe(2);
  } finally {
    await store.close();
  }
}, 60_000);
