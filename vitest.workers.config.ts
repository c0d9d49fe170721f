/**
 * The workerd suite: tests in test/workerd run inside the real Workers runtime through
 * @cloudflare/vitest-pool-workers, with the Worker of wrangler.toml as `exports.default`.
 * Test-only secrets are bindings here, never in wrangler.toml.
 */
import { createHash } from "node:crypto";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Read by the tests only (the Worker reads the hash): the operator credential of /healthz details.
const WORKERD_TEST_ADMIN_KEY = "workerd_test_admin_key_0123456789";

export const WORKERD_TEST_BINDINGS = {
  ESIGN_WEBHOOK_SECRET: "workerd_test_esign_secret_0123456789",
  STAFFING_WEBHOOK_SECRET: "workerd_test_staffing_secret_0123456789",
  GATEWAY_ADMIN_KEY_HASH: `sha256:${createHash("sha256").update(WORKERD_TEST_ADMIN_KEY).digest("hex")}`,
  WORKERD_TEST_ADMIN_KEY,
  GATEWAY_LOG_LEVEL: "warn",
};

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: { bindings: WORKERD_TEST_BINDINGS },
    }),
  ],
  test: {
    include: ["test/workerd/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
