/**
 * The live hub conformance suite against the `redis` hub driver (journal read, woken by pub/sub)
 * over the `redis` store on a real redis-server; plus what only a cross-instance hub does: a
 * subscriber hears the appends of another instance, in seq order, and an append nobody announced
 * (a lost pub/sub message) still arrives through the journal poll.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisHub } from "../../../adapters/hub/redis.ts";
import { redisStore } from "../../../adapters/store/redis/redis-store.ts";
import { testHubDriver } from "../../conformance/hub-conformance.ts";
import { waitFor } from "../../delivery/helpers/webhook-receiver.ts";
import { startDurableRedis } from "../../helpers/durable-redis.ts";
import { appendRecords, journalHubHarness } from "../../helpers/journal-hub-harness.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let n = 0;

beforeAll(async () => {
  redis = await startDurableRedis();
});
afterAll(async () => {
  await redis?.stop();
});

testHubDriver(
  "redis",
  journalHubHarness({
    openStore: () => redisStore({ url: redis.url, prefix: `h${++n}` }),
    openHub: (journal) => redisHub({ url: redis.url, prefix: `h${n}`, journal }),
  }),
);

describe("redis hub across instances", () => {
  it("hands a subscriber on one instance the other's appends in seq order, announced or not", async () => {
    const prefix = `x${++n}`;
    const [storeA, storeB] = await Promise.all([
      redisStore({ url: redis.url, prefix }),
      redisStore({ url: redis.url, prefix }),
    ]);
    // A long poll: announced records must arrive through pub/sub well before it.
    const hubA = await redisHub({ url: redis.url, prefix, journal: storeA, pollMs: 60_000 });
    const hubB = await redisHub({ url: redis.url, prefix, journal: storeB, pollMs: 60_000 });
    // A short poll and no announcement (its channel is another prefix's): what it hears comes
    // from the journal alone. Subscribed from the start, as on PostgreSQL: a subscriber added
    // later hears from wherever the hub's own poll has got to, which a loaded machine delays.
    const hubC = await redisHub({ url: redis.url, prefix: `other${n}`, journal: storeA, pollMs: 50 });
    try {
      const heard: number[] = [];
      hubA.subscribe((record) => heard.push(record.seq));
      const polled: number[] = [];
      hubC.subscribe((record) => polled.push(record.seq));
      const seqs = await appendRecords(storeB, 5, hubB);
      await waitFor("the announced appends", () => heard.length >= seqs.length, 10_000);
      expect(heard).toEqual(seqs);

      // Appended without an announcement (a lost pub/sub message): the poll reads it, in order.
      const [seq] = (await appendRecords(storeB, 1)) as [number];
      await waitFor("the unannounced append", () => polled.includes(seq), 10_000);
      expect(polled).toEqual([...seqs, seq]);
      // A's subscriber lost nothing and heard nothing twice; it may have read the unannounced
      // append too, when a wake-up of its own (a late pub/sub message) reads the log after it.
      expect([seqs, [...seqs, seq]]).toContainEqual(heard);
    } finally {
      await Promise.all([hubA.close(), hubB.close(), hubC.close()]);
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });
});
