/** Runs the outbox conformance and lease suites against the `redis` driver on a real redis-server. */
import { afterAll, beforeAll } from "vitest";
import { redisOutbox } from "../../adapters/store/redis/redis-driver.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import { type OutboxHarness, testOutboxStore } from "./outbox-conformance.ts";
import { testOutboxLeases } from "./outbox-lease-conformance.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let n = 0;
const prefixOf = new WeakMap<OutboxStore, string>();

beforeAll(async () => {
  redis = await startDurableRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const open = async (prefix: string) => {
  const outbox = await redisOutbox({ url: redis.url, prefix });
  prefixOf.set(outbox, prefix);
  return outbox;
};
const harness: OutboxHarness = {
  open: () => open(`o${++n}`),
  async reopen(outbox) {
    await outbox.close();
    return open(prefixOf.get(outbox) as string);
  },
};

testOutboxStore("redis", harness);
testOutboxLeases("redis", harness);
