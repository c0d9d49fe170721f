/**
 * Every `json config` example of docs/behind-a-load-balancer.md is a complete configuration the
 * real schema accepts (the placeholders filled the way the environment would).
 */
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { resolveConfig } from "../../src/config/resolve-config.ts";

const PAGE = new URL("../../docs/behind-a-load-balancer.md", import.meta.url);
const env = {
  ESIGN_WEBHOOK_SECRET: "whsec-esign-example-0123456789",
  STAFFING_WEBHOOK_SECRET: "whsec-staffing-example-0123456789",
  METRICS_TOKEN_HASH: `sha256:${"a".repeat(64)}`,
};

const examples = [...readFileSync(PAGE, "utf8").matchAll(/```json config\n([\s\S]*?)```/g)].map((m) => m[1] as string);

test("the page has its examples", () => {
  expect(examples.length).toBeGreaterThanOrEqual(2);
});

test.each(examples.map((text, i) => [i + 1, text]))("example %i resolves", (_, text) => {
  const config = resolveConfig(JSON.parse(text as string), env);
  expect(config.server.trustProxy).not.toBe(false);
  expect(config.server.keepAliveTimeoutMs).toBe(65_000);
});
