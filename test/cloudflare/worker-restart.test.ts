/**
 * The deployable Worker bundle (`wrangler deploy --dry-run`) in workerd through Miniflare with
 * persisted Durable Object storage: a runtime stopped in the middle of a load of signed webhooks
 * and started again on the same directory still has every event it acknowledged with 202, and
 * still answers their retries as duplicates (docs/cloudflare-workers.md).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, expect, it } from "vitest";
import { adminKeyHash, esignDelivery, type SignedDelivery } from "../helpers/signed-requests.ts";
import { buildWorkerBundle, startWorkerBundle } from "../helpers/worker-bundle.ts";

const SECRET = "restart_test_esign_secret_0123456789";
const ADMIN_KEY = "restart_test_admin_key_0123456789";
const bindings = {
  ESIGN_WEBHOOK_SECRET: SECRET,
  STAFFING_WEBHOOK_SECRET: "restart_test_staffing_secret_0123456789",
  GATEWAY_ADMIN_KEY_HASH: adminKeyHash(ADMIN_KEY),
  GATEWAY_LOG_LEVEL: "silent",
};

let dir: string;
let scriptPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "gateway-worker-restart-"));
  scriptPath = await buildWorkerBundle(join(dir, "dist"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function post(miniflare: Miniflare, delivery: SignedDelivery) {
  return miniflare.dispatchFetch("http://gateway.test/webhooks/esign", {
    method: "POST",
    headers: delivery.headers,
    body: delivery.body,
  });
}

it("keeps every acknowledged event across a runtime stopped mid-load", async () => {
  const persistDir = join(dir, "state");
  const first = await startWorkerBundle({ scriptPath, persistDir, bindings });
  const deliveries = await Promise.all(Array.from({ length: 300 }, () => esignDelivery(SECRET)));
  const acknowledged = new Map<number, string>();
  let stop: Promise<void> | undefined;
  // 300 concurrent deliveries; the runtime is stopped once 100 were acknowledged.
  const results = await Promise.allSettled(
    deliveries.map(async (delivery, i) => {
      const response = await post(first, delivery);
      if (response.status !== 202) return;
      acknowledged.set(i, ((await response.json()) as { id: string }).id);
      if (acknowledged.size === 100) stop = first.dispose();
    }),
  );
  await (stop ?? first.dispose());
  expect(acknowledged.size).toBeGreaterThanOrEqual(100);
  expect(results.length).toBe(300);

  const second = await startWorkerBundle({ scriptPath, persistDir, bindings });
  try {
    const listed = await second.dispatchFetch("http://gateway.test/events?limit=500", {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(listed.status).toBe(200);
    const ids = new Set(((await listed.json()) as { events: { id: string }[] }).events.map((e) => e.id));
    const lost = [...acknowledged.values()].filter((id) => !ids.has(id));
    expect(lost).toEqual([]);
    // An upstream retry of an acknowledged delivery is a duplicate, not a second event.
    const [index, id] = [...acknowledged.entries()][0] as [number, string];
    const retry = await post(second, deliveries[index] as SignedDelivery);
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ id, duplicate: true });
  } finally {
    await second.dispose();
  }
});
