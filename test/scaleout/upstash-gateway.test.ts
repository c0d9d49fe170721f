/**
 * Two gateway processes on the `upstash` driver (REST, through an Upstash front in front of a
 * real redis-server): one 202 for a delivery posted to both, and a live subscriber on one
 * instance receives, in order, what the other accepts (the journal polled every `hub.pollMs`).
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, listAllEventIds, postWebhook } from "../helpers/signed-requests.ts";
import { startUpstashFront, type UpstashFront } from "../helpers/upstash-server.ts";
import { openReadyWs } from "../stream/stream-fixtures.ts";
import { type Cluster, startCluster, wsUrlOf } from "./cluster-fixtures.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let front: UpstashFront;
let cluster: Cluster;

beforeAll(async () => {
  redis = await startDurableRedis();
  front = await startUpstashFront(redis.url);
  cluster = await startCluster({
    redisUrl: redis.url,
    count: 2,
    env: { UPSTASH_REDIS_REST_TOKEN: front.token },
    edit: (config) => {
      config.store = { driver: "upstash", url: front.url, prefix: "up" };
      config.hub = { driver: "upstash", pollMs: 50 };
    },
  });
});
afterAll(async () => {
  await cluster?.stop();
  await front?.stop();
  await redis?.stop();
});

test("one 202 across instances, and the live stream reaches the other instance's subscriber", async () => {
  const [one, two] = cluster.gateways as [GatewayProcess, GatewayProcess];
  const { secrets, streamKey } = cluster;
  const delivery = await esignDelivery(secrets.esign);
  const statuses = await Promise.all([one, two].map(async (g) => (await postWebhook(g.url, "esign", delivery)).status));
  expect(statuses.filter((s) => s === 202)).toHaveLength(1);

  const client = await openReadyWs(wsUrlOf(one, streamKey));
  const posted: string[] = [];
  for (let i = 0; i < 5; i++) {
    const answer = await postWebhook(two.url, "esign", await esignDelivery(secrets.esign));
    expect(answer.status).toBe(202);
    posted.push(((await answer.json()) as { id: string }).id);
  }
  await client.log.waitForEvents(posted.length);
  expect(client.log.eventIds()).toEqual(posted);
  client.ws.close();
  expect(await listAllEventIds(one.url, secrets.adminKey)).toHaveLength(6);
  const health = (await (await fetch(`${two.url}/healthz`)).json()) as { store: { driver: string } };
  expect(health.store.driver).toBe("upstash");
});
