/**
 * No delivery waits for the poll: in a real gateway process whose delivery polls are set to an
 * hour (`GATEWAY_DELIVERY_POLL_MS`), a burst of 2,000 webhooks (about eight of the route
 * dispatcher's batches of 256, far more than a lane's concurrency) reaches a real HTTP receiver
 * in full, on the embedded store and on the Redis store. Any event left for the poll would sit
 * there for the hour and the wait below would fail naming how many are missing. Not timed: the
 * deadline only bounds the test on a loaded machine.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import { esignDelivery, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import { readDestinations, startHookGatewayWithoutPoll } from "./helpers/process-fixtures.ts";
import { startWebhookReceiver, waitFor } from "./helpers/webhook-receiver.ts";

const BURST = 2000;
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

/**
 * Posts `count` signed webhooks (both services), `concurrency` at a time; the event ids. A
 * request cut by the network (a keep-alive race on a loaded machine) is sent again as an
 * upstream would: the same delivery, so the gateway answers it as a duplicate of the same event.
 */
async function postBurst(gateway: GatewayProcess, count: number, concurrency: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const delivery =
        i % 2 === 0
          ? await esignDelivery(gateway.secrets.esign, "agreement.completed")
          : await staffingDelivery(gateway.secrets.staffing, "candidate.accepted");
      for (let attempt = 1; ; attempt++) {
        const response = await postWebhook(gateway.url, i % 2 === 0 ? "esign" : "staffing", delivery).catch(
          (error: Error) => {
            if (attempt >= 5) throw new Error(`webhook ${i}: ${error.message}\n${gateway.lines.slice(-20).join("\n")}`);
            return undefined;
          },
        );
        if (!response) continue;
        // The cut request may still be being recorded: "in progress" asks for a retry.
        if (response.status === 409 && attempt < 50) {
          await response.body?.cancel();
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        const body = (await response.json()) as { id: string };
        if (response.status !== 202 && response.status !== 200)
          throw new Error(`webhook ${i} answered ${response.status}`);
        ids[i] = body.id;
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}

async function burstIsDelivered(store?: (dataDir: string) => Record<string, unknown>) {
  const receiver = await startWebhookReceiver();
  cleanup.push(() => receiver.close());
  const gateway = await startHookGatewayWithoutPoll({ url: receiver.url }, cleanup, store);

  const ids = await postBurst(gateway, BURST, 64);
  expect(new Set(ids).size).toBe(BURST);
  const received = () => new Set(receiver.ids());
  await waitFor(
    "every event of the burst at the receiver (the poll is an hour away)",
    () => received().size >= ids.length,
    240_000,
  ).catch((error: Error) => {
    const got = received();
    throw new Error(`${error.message}: ${ids.filter((id) => !got.has(id)).length} of ${ids.length} missing`);
  });
  expect([...received()].sort()).toEqual([...ids].sort());
  await waitFor("the destination to drain", async () => (await readDestinations(gateway))[0]?.backlog === 0, 60_000);
  const [health] = await readDestinations(gateway);
  expect(health).toMatchObject({ id: "hook", state: "active", backlog: 0, counts: { delivered: BURST } });
}

describe("a burst larger than the dispatcher's batch, with the delivery polls an hour apart", () => {
  it("embedded store: every event is delivered", { timeout: 360_000 }, async () => {
    await burstIsDelivered();
  });

  it("Redis store: every event is delivered", { timeout: 360_000 }, async () => {
    const redis: RedisServer = await startRedisServer();
    cleanup.push(() => redis.stop());
    await burstIsDelivered(() => ({ driver: "redis", url: redis.url, prefix: `gw-burst-${Date.now()}` }));
  });
});

describe("GATEWAY_DELIVERY_POLL_MS", () => {
  it("a value that is not whole milliseconds in range stops start-up naming the variable", async () => {
    for (const value of ["1.5", "86400001"]) {
      const started = startGatewayProcess({ env: { GATEWAY_DELIVERY_POLL_MS: value } });
      await expect(started).rejects.toThrow(
        /GATEWAY_DELIVERY_POLL_MS: expected whole milliseconds from 10 to 86400000/,
      );
    }
  });
});
