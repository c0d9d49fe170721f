/**
 * The API proxy on Workers: the e-sign access token is cached in the Durable Object store's kv
 * and refreshed under its lock, so 100 concurrent proxied calls cause one token request, also
 * when they arrive through two gateway instances (the Worker and a second instance built on
 * the same bindings, standing in for another isolate).
 */
import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { createWorkerConfig } from "../../adapters/cloudflare/worker-config.ts";
import { openWorkerStore } from "../../adapters/cloudflare/worker-env.ts";
import { inProcessHub } from "../../adapters/hub/in-process.ts";
import { createGateway } from "../../src/create-gateway.ts";
import { BASE } from "./gateway-client.ts";

const APP_KEY = "workerd_test_app_key_0123456789";

async function tokenRequests(): Promise<number> {
  const stats = (await (await fetch(`${env.TEST_SINK_URL}/stats`)).json()) as { esignTokenRequests: number };
  return stats.esignTokenRequests;
}

it("answers 100 concurrent proxied calls through two instances with one token request", async () => {
  const before = await tokenRequests();
  const other = createGateway({
    config: createWorkerConfig(env),
    store: openWorkerStore(env),
    hub: inProcessHub(undefined),
  });
  const call = (i: number) => {
    const request = new Request(`${BASE}/api/esign/agreements`, { headers: { authorization: `Bearer ${APP_KEY}` } });
    return i % 2 === 0 ? exports.default.fetch(request) : other.fetch(request);
  };
  const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => call(i)));
  expect(responses.map((r) => r.status)).toEqual(Array(100).fill(200));
  expect(await tokenRequests()).toBe(before + 1);
  // Cached: later calls need no token request at all.
  expect((await call(0)).status).toBe(200);
  expect((await call(1)).status).toBe(200);
  expect(await tokenRequests()).toBe(before + 1);
});
