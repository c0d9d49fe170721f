/** The outbox conformance and lease suites against the `redis` driver on a real redis-server. */
import { afterAll, beforeAll } from "vitest";
import { redisOutbox } from "../../../adapters/outbox/redis/redis-outbox.ts";
import type { OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { type OutboxHarness, testOutboxDriver } from "../../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../../conformance/outbox-lease-conformance.ts";
import { startDurableRedis } from "../../helpers/durable-redis.ts";

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

testOutboxDriver("redis", harness);
testOutboxLeases("redis", harness);
