/**
 * Redis goes away under a running gateway: webhooks get 503 with Retry-After (never a 2xx),
 * `/healthz` answers 503 naming the store, and once Redis is back on the same address (AOF
 * data kept) the gateway reconnects without a restart, accepts again, and the delivery that
 * was retrying before the outage is delivered.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { type Cluster, hookRetriesThroughFaults, startCluster } from "./cluster-fixtures.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let receiver: WebhookReceiver;
let cluster: Cluster;

beforeAll(async () => {
  redis = await startDurableRedis();
  receiver = await startWebhookReceiver(() => ({ status: 500 }));
  cluster = await startCluster({
    redisUrl: redis.url,
    count: 1,
    hookUrl: receiver.url,
    edit: hookRetriesThroughFaults,
  });
});
afterAll(async () => {
  await cluster?.stop();
  await receiver?.close();
  await redis?.stop();
});

test("503 + Retry-After while Redis is down, reconnect without restart, the pending delivery resumes", async () => {
  const gateway = cluster.gateways[0] as GatewayProcess;
  const { secrets } = cluster;
  const first = await postWebhook(gateway.url, "esign", await esignDelivery(secrets.esign));
  expect(first.status).toBe(202);
  const { id } = (await first.json()) as { id: string };
  await waitFor("a failed attempt", () => receiver.ids().includes(id));

  await redis.pause();
  const later = await esignDelivery(secrets.esign);
  const refused = await postWebhook(gateway.url, "esign", later);
  expect(refused.status).toBe(503);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("store_unavailable");
  const down = await fetch(`${gateway.url}/healthz`);
  expect(down.status).toBe(503);
  expect(((await down.json()) as { store: { driver: string; reachable: boolean } }).store).toMatchObject({
    driver: "redis",
    reachable: false,
  });

  receiver.respond(() => ({ status: 200 }));
  redis = await startDurableRedis({ port: redis.port, dir: redis.dir });
  await waitFor("healthz 200 after the reconnect", async () => (await fetch(`${gateway.url}/healthz`)).status === 200);
  let status = 0;
  for (let attempt = 0; attempt < 50 && status !== 202; attempt++) {
    status = (await postWebhook(gateway.url, "esign", later)).status;
  }
  expect(status).toBe(202);
  await waitFor("the delivery retrying before the outage is delivered", async () => {
    const response = await fetch(`${gateway.url}/events/${id}`, {
      headers: { authorization: `Bearer ${secrets.adminKey}` },
    });
    const body = (await response.json()) as { deliveries?: { destination: string; state: string }[] };
    return body.deliveries?.some((d) => d.destination === "hook" && d.state === "delivered") ?? false;
  });
});
