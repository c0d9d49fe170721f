/**
 * Proxied answers stay what they say on Workers (issue 30 row 7, docs/api-proxy.md#compressed-answers):
 * an upstream that compresses its answer anyway (gzip, deflate zlib-wrapped or raw, br; small
 * and past 64 KiB) reaches the client readable, without a `Content-Encoding` that no longer
 * holds, and the gateway asked for `Accept-Encoding: identity`. The upstream is the suite's real
 * loopback receiver (`/compressed/...`, test/helpers/http-sink-receiver.ts), reached through
 * workerd's own `fetch` (which decodes gzip and br; the Worker's upstream client decodes
 * deflate); the gateway is built like the Worker's, on its bindings, with one more upstream.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { createWorkerConfig } from "../../adapters/cloudflare/worker-config.ts";
import { openWorkerStore } from "../../adapters/cloudflare/worker-env.ts";
import { workerUpstreamFetch } from "../../adapters/cloudflare/worker-upstream-fetch.ts";
import { inProcessHub } from "../../adapters/hub/in-process.ts";
import { createGateway } from "../../src/create-gateway.ts";
import { COMPRESSED_ANSWERS } from "../helpers/compressed-answers.ts";
import { BASE, received } from "./gateway-client.ts";

const APP_KEY = "workerd_test_app_key_0123456789";

function gatewayWithCompressingUpstream() {
  const config = JSON.parse(env.GATEWAY_CONFIG) as {
    upstreams: Record<string, unknown>[];
    clients: { scopes: { proxy: Record<string, unknown>[] } }[];
  };
  config.upstreams.push({
    id: "staffing",
    service: "staffing",
    baseUrl: `${env.TEST_SINK_URL}/compressed`,
    apiKey: "compressing-upstream-key",
  });
  for (const client of config.clients) client.scopes.proxy.push({ upstream: "staffing" });
  return createGateway({
    config: createWorkerConfig({ ...env, GATEWAY_CONFIG: JSON.stringify(config) }),
    store: openWorkerStore(env),
    hub: inProcessHub(undefined),
    // As the Worker builds its gateway (adapters/cloudflare/worker.ts).
    upstreamFetch: workerUpstreamFetch,
  });
}

const CASES = ["gzip", "deflate", "deflate-raw", "br"].flatMap((kind) => [
  [kind, "small"] as const,
  [kind, "large"] as const,
]);

it.each(CASES)("a %s answer (%s) reaches the client decoded, without Content-Encoding", async (kind, size) => {
  const gateway = gatewayWithCompressingUpstream();
  const answer = await gateway.fetch(
    new Request(`${BASE}/api/staffing/c/${kind}/${size}`, {
      headers: { authorization: `Bearer ${APP_KEY}`, "accept-encoding": "gzip, deflate, br" },
    }),
  );
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  expect(answer.headers.get("content-encoding")).toBeNull();
  const bytes = new Uint8Array(await answer.arrayBuffer());
  const length = answer.headers.get("content-length");
  if (length !== null) expect(Number(length)).toBe(bytes.byteLength);
  const text = new TextDecoder().decode(bytes);
  expect(text).toBe(COMPRESSED_ANSWERS[size]);
  // The client's Accept-Encoding was not passed on: the gateway asked for the plain body.
  expect((await received("/compressed")).at(-1)?.headers["accept-encoding"]).toBe("identity");
});
