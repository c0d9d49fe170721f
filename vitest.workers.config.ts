/**
 * The workerd suite: tests in test/workerd run inside the real Workers runtime through
 * @cloudflare/vitest-pool-workers, with the Worker of wrangler.toml as `exports.default` and its
 * Durable Objects. Test-only secrets, the delivery config and the test queue are bindings here,
 * never in wrangler.toml. A real HTTP receiver on loopback (test/helpers/http-sink-receiver.ts)
 * is the http destination; a small consumer Worker forwards the test queue's messages to it; the
 * e-sign API fake (test/fakes) is the proxy's upstream.
 */
import { createHash } from "node:crypto";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import {
  ENDLESS_LOOP,
  ESCAPE_PROBE,
  MEMORY_BOMB,
  RESHAPE,
  SKIP_COMPLETED,
  THROWS,
} from "./test/transform/transform-fixtures.ts";

// Read by the tests through a test-only binding (the Worker reads only the hash): the operator credential.
export const WORKERD_ADMIN_KEY = "workerd_test_admin_key_0123456789";
/** The API key of the test client (proxy, live stream). */
export const WORKERD_APP_KEY = "workerd_test_app_key_0123456789";
const sha256 = (value: string) => `sha256:${createHash("sha256").update(value).digest("hex")}`;

/** The http destination's Standard Webhooks secret (test only). */
export const WORKERD_WHSEC = `whsec_${Buffer.from("workerd-test-signing-secret-0123").toString("base64")}`;

/** Destinations and routes (GATEWAY_CONFIG); sources come from the secret bindings. */
const GATEWAY_CONFIG = {
  destinations: [
    {
      id: "hooks",
      type: "http",
      url: "${TEST_SINK_URL}/hook",
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
      retry: { schedule: [0.05, 0.05, 0.05], jitter: 0 },
      breaker: { failures: 1000 },
    },
    {
      // Retries after 1 s: long enough for a test to evict the object before the retry is due.
      id: "slow-hooks",
      type: "http",
      url: "${TEST_SINK_URL}/slow",
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
      retry: { schedule: [1], jitter: 0 },
    },
    { id: "live", type: "stream" },
    // The delivery matrix (test/workerd/delivery-matrix.test.ts): both http modes, type "matrix.test" only.
    {
      id: "matrix-cloudevents",
      type: "http",
      url: "${TEST_SINK_URL}/matrix-cloudevents",
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
    },
    {
      id: "matrix-relay",
      type: "http",
      mode: "relay",
      url: "${TEST_SINK_URL}/matrix-relay",
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
    },
    // Transforms (test/workerd/transform-in-workerd.test.ts): one destination per case, own paths.
    ...Object.entries({
      reshape: { code: RESHAPE },
      skip: { code: SKIP_COMPLETED.replace("agreement.completed", "agreement.viewed") },
      slack: { builtin: "slack" },
      loop: { code: ENDLESS_LOOP, timeoutMs: 100 },
      bomb: { code: MEMORY_BOMB, memoryLimitMb: 8, timeoutMs: 1000 },
      throws: { code: THROWS },
      escape: { code: ESCAPE_PROBE },
    }).map(([name, transform]) => ({
      id: `t-${name}`,
      type: "http",
      url: `\${TEST_SINK_URL}/t-${name}`,
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
      retry: { schedule: [0.05], jitter: 0 },
      transform,
    })),
    // Erasure of attempt records (test/workerd/erasure-in-workerd.test.ts): logs and throws the address.
    {
      id: "t-leaky",
      type: "http",
      url: "${TEST_SINK_URL}/t-leaky",
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
      retry: { schedule: [0.05], jitter: 0 },
      transform: {
        code: `export default (event) => {
  const email = event.data.participant.email;
  console.log("mapping participant", email);
  throw new Error("cannot map " + email);
};`,
      },
    },
    // Runaway transforms (test/workerd/transform-no-stall-in-workerd.test.ts, issue 30 row 4):
    // default limits (50 ms, 16 MiB), each on its own destination, next to a plain one.
    ...Object.entries({
      bomb: "export default () => { const a = []; for (;;) a.push(new Array(1e6).fill(7)); };",
      quadratic: "export default () => ({ i: 'a'.repeat(140000).indexOf('a'.repeat(70000) + 'b') });",
      loop: "export default () => { for (;;) {} };",
    }).map(([name, code]) => ({
      id: `ns-${name}`,
      type: "http",
      url: `\${TEST_SINK_URL}/ns-${name}`,
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
      retry: { schedule: [0.05], jitter: 0 },
      transform: { code },
    })),
    {
      id: "ns-plain",
      type: "http",
      url: "${TEST_SINK_URL}/ns-plain",
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
      retry: { schedule: [0.05], jitter: 0 },
    },
    // Operational events (test/workerd/lifecycle-in-workerd.test.ts).
    {
      id: "ops",
      type: "http",
      url: "${TEST_SINK_URL}/ops",
      secrets: [WORKERD_WHSEC],
      allowPrivateNetworks: true,
      retry: { schedule: [0.05], jitter: 0 },
    },
    {
      id: "events-queue",
      type: "queue",
      driver: "cloudflare-queues",
      binding: "TEST_EVENTS_QUEUE",
      retry: { schedule: [0.05], jitter: 0 },
    },
  ],
  routes: [
    { sources: ["esign"], types: ["agreement.*"], destinations: ["hooks", "events-queue"] },
    { sources: ["esign"], types: ["agreement.expired"], destinations: ["slow-hooks"] },
    { destinations: ["live"] },
    { types: ["matrix.test"], destinations: ["matrix-cloudevents", "matrix-relay"] },
    {
      sources: ["esign"],
      types: ["agreement.sent", "agreement.viewed"],
      destinations: ["t-reshape", "t-skip", "t-slack", "t-loop", "t-bomb", "t-throws", "t-escape"],
    },
    { sources: ["esign"], types: ["agreement.erasure-probe"], destinations: ["t-leaky"] },
    {
      sources: ["esign"],
      types: ["agreement.superseded"],
      destinations: ["ns-bomb", "ns-quadratic", "ns-loop", "ns-plain"],
    },
    { sources: ["gateway"], destinations: ["ops"] },
  ],
  // Transform objects (adapters/cloudflare/transform-object.ts): more slack than the default 100 ms
  // for a loaded 2-core machine, where workerd runs every isolate of the suite on one thread
  // (the runaway transforms of transform-no-stall-in-workerd.test.ts run for seconds).
  transforms: { deadlineSlackMs: 2000 },
  operationalEvents: { deadBatchSeconds: 1 },
  // Webhook bodies in flight per isolate (test/workerd/hardening-in-workerd.test.ts fills it):
  // 1.5 MiB, above the sources' default 1 MiB body limit as the config check requires.
  ingress: { maxBodyBytesInFlight: 1.5 * 1024 * 1024 },
  // Per-type retention (test/workerd/lifecycle-in-workerd.test.ts ages an event past it).
  retention: [{ sources: ["esign"], types: ["agreement.viewed"], days: 1 }],
  upstreams: [
    {
      id: "esign",
      service: "esign",
      baseUrl: "${TEST_ESIGN_BASE_URL}",
      clientId: "${TEST_ESIGN_CLIENT_ID}",
      clientSecret: "${TEST_ESIGN_CLIENT_SECRET}",
    },
  ],
  clients: [
    {
      id: "app",
      apiKeyHashes: [sha256(WORKERD_APP_KEY)],
      allowedOrigins: ["https://app.example.com"],
      scopes: { proxy: [{ upstream: "esign" }], stream: {}, events: true },
    },
  ],
  // JWTs for the app client (test/workerd/hardening-in-workerd.test.ts checks their lifetime rule).
  auth: { jwt: { hs256Secret: "${WORKERD_TEST_JWT_SECRET}", maxLifetimeSeconds: 3600 } },
};

export const WORKERD_TEST_BINDINGS = {
  ESIGN_WEBHOOK_SECRET: "workerd_test_esign_secret_0123456789",
  STAFFING_WEBHOOK_SECRET: "workerd_test_staffing_secret_0123456789",
  // Key rotation: two more active staffing secrets, comma-separated.
  STAFFING_WEBHOOK_SECRETS: "workerd_rotated_staffing_old_0123,workerd_rotated_staffing_new_4567",
  GATEWAY_ADMIN_KEY_HASH: sha256(WORKERD_ADMIN_KEY),
  GATEWAY_CONFIG: JSON.stringify(GATEWAY_CONFIG),
  WORKERD_TEST_ADMIN_KEY: WORKERD_ADMIN_KEY,
  /** The http destinations' Standard Webhooks secret, for the tests to verify with. */
  WORKERD_TEST_WHSEC: WORKERD_WHSEC,
  /** The HS256 secret of the client JWTs (read by the Worker through GATEWAY_CONFIG and by the tests). */
  WORKERD_TEST_JWT_SECRET: "workerd_test_jwt_secret_0123456789abcdef",
  GATEWAY_LOG_LEVEL: "warn",
};

/** Consumes the test queue: each message is POSTed to the receiver's `/queue`, then acked. */
const QUEUE_FORWARDER = `
export default {
  async queue(batch, env) {
    for (const message of batch.messages) {
      const response = await fetch(env.SINK_URL + "/queue", { method: "POST", body: JSON.stringify(message.body) });
      if (response.ok) message.ack(); else message.retry();
    }
  },
};`;

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          ...WORKERD_TEST_BINDINGS,
          TEST_SINK_URL: inject("sinkUrl"),
          TEST_ESIGN_BASE_URL: inject("esignBaseUrl"),
          TEST_ESIGN_CLIENT_ID: inject("esignClientId"),
          TEST_ESIGN_CLIENT_SECRET: inject("esignClientSecret"),
          // Tracing on, exported every 50 ms to the suite's OTLP receiver (docs/tracing.md).
          OTEL_EXPORTER_OTLP_ENDPOINT: inject("otlpUrl"),
          OTEL_BSP_SCHEDULE_DELAY: "50",
        },
        queueProducers: { TEST_EVENTS_QUEUE: { queueName: "workerd-test-events" } },
        workers: [
          {
            name: "queue-forwarder",
            modules: true,
            script: QUEUE_FORWARDER,
            compatibilityDate: "2026-04-26",
            bindings: { SINK_URL: inject("sinkUrl") },
            queueConsumers: { "workerd-test-events": { maxBatchSize: 10, maxBatchTimeout: 1 } },
          },
        ],
      },
    })),
  ],
  test: {
    include: ["test/workerd/**/*.test.ts"],
    globalSetup: ["test/helpers/workerd-global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
