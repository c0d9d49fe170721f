/**
 * The `upstash` driver runs the store, outbox and lease conformance suites through an Upstash
 * REST front in front of a real redis-server (the same Lua scripts as the `redis` driver).
 */
import { afterAll, beforeAll } from "vitest";
import { upstashOutbox, upstashStore } from "../../adapters/store/upstash/upstash-driver.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import { startUpstashFront, type UpstashFront } from "../helpers/upstash-server.ts";
import { describeStoreConformance } from "./conformance.ts";
import { type OutboxHarness, testOutboxStore } from "./outbox-conformance.ts";
import { testOutboxLeases } from "./outbox-lease-conformance.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let front: UpstashFront;
let n = 0;
const prefixOf = new WeakMap<OutboxStore, string>();

beforeAll(async () => {
  redis = await startDurableRedis();
  front = await startUpstashFront(redis.url);
});
afterAll(async () => {
  await front?.stop();
  await redis?.stop();
});

const options = (prefix: string) => ({ url: front.url, token: front.token, prefix });

describeStoreConformance("upstash", ({ now }) => upstashStore({ ...options(`u${++n}`), now }));

const open = async (prefix: string) => {
  const outbox = await upstashOutbox(options(prefix));
  prefixOf.set(outbox, prefix);
  return outbox;
};
const harness: OutboxHarness = {
  open: () => open(`uo${++n}`),
  async reopen(outbox) {
    await outbox.close();
    return open(prefixOf.get(outbox) as string);
  },
};
testOutboxStore("upstash", harness);
testOutboxLeases("upstash", harness);
