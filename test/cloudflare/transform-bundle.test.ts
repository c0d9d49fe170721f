/**
 * The deployable Worker bundle (`wrangler deploy --dry-run`) carries the transform sandbox's
 * QuickJS WebAssembly as a module of its own, and that bundle runs a transform in workerd
 * (Miniflare): `POST /transforms/test` with the built-in Slack format on a recorded event.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { adminKeyHash, esignDelivery } from "../helpers/signed-requests.ts";
import { buildWorkerBundle, startWorkerBundle } from "../helpers/worker-bundle.ts";

const SECRET = "bundle_test_esign_secret_0123456789";
const ADMIN_KEY = "bundle_test_admin_key_0123456789";
let dir: string | undefined;

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("bundles the QuickJS wasm and runs a transform in workerd", async () => {
  dir = await mkdtemp(join(tmpdir(), "gateway-transform-bundle-"));
  const scriptPath = await buildWorkerBundle(join(dir, "dist"));
  const wasm = (await readdir(join(dir, "dist"))).filter((name) => name.endsWith(".wasm"));
  expect(wasm).toHaveLength(1);
  const miniflare = await startWorkerBundle({
    scriptPath,
    persistDir: join(dir, "state"),
    bindings: {
      ESIGN_WEBHOOK_SECRET: SECRET,
      STAFFING_WEBHOOK_SECRET: "bundle_test_staffing_secret_0123456789",
      GATEWAY_ADMIN_KEY_HASH: adminKeyHash(ADMIN_KEY),
      GATEWAY_LOG_LEVEL: "silent",
    },
  });
  try {
    const delivery = await esignDelivery(SECRET, "agreement.declined", { subjectId: "agr-bundle" });
    const posted = await miniflare.dispatchFetch("http://gateway.test/webhooks/esign", {
      method: "POST",
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(posted.status).toBe(202);
    const { id } = (await posted.json()) as { id: string };
    const response = await miniflare.dispatchFetch("http://gateway.test/transforms/test", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ event: id, builtin: "slack" }),
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { ok: boolean; result: { text: string } };
    expect(answer.ok).toBe(true);
    expect(answer.result.text).toMatch(/^Agreement declined: /);
  } finally {
    await miniflare.dispose();
  }
});
