/**
 * One e-sign access token for every instance: 300 concurrent proxy calls spread over three
 * cold gateway processes sharing one Redis cause exactly one token request (the token cache's
 * kv lock works across processes on the `redis` driver; src/proxy/token-cache.ts).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, test } from "vitest";
import { startDurableRedis } from "../helpers/durable-redis.ts";
import { type EsignServer, startEsignEmulator } from "../helpers/emulators.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { fullClient, newKey, proxyConfig, proxyEnv } from "../proxy/proxy-fixtures.ts";

let redis: Awaited<ReturnType<typeof startDurableRedis>>;
let esign: EsignServer;
let gateways: GatewayProcess[] = [];

beforeAll(async () => {
  redis = await startDurableRedis();
  esign = await startEsignEmulator({ generalLimitPerClient: 100_000 });
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.kill()));
  await esign?.close();
  await redis?.stop();
});

test("300 concurrent proxy calls over three cold instances: exactly one token request", async () => {
  const key = newKey();
  const options = {
    esign,
    clients: [fullClient(key)],
    store: { driver: "redis", url: redis.url, prefix: `t${randomBytes(4).toString("hex")}` },
  };
  gateways = await Promise.all(
    [0, 1, 2].map(() => startGatewayProcess({ config: proxyConfig(options), env: proxyEnv(options) })),
  );
  const agreementId = await esign.createAgreement("Shared token");
  const before = esign.tokenRequests();
  const answers = await Promise.all(
    Array.from({ length: 300 }, (_, i) =>
      fetch(`${gateways[i % 3]?.url}/api/esign/agreements/${agreementId}`, {
        headers: { authorization: `Bearer ${key}` },
      }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    ),
  );
  expect(answers.filter((s) => s === 200)).toHaveLength(300);
  expect(esign.tokenRequests() - before).toBe(1);
  expect(new Set(esign.issued)).toHaveProperty("size", 1);
});
