/**
 * `/healthz` recovers by itself (docs/operations-and-metrics.md#health): a real gateway process
 * on its SQLite store in a small tmpfs. The disk is filled until webhooks get 503 and `/healthz`
 * says the gateway cannot record; then space comes back, no webhook arrives, and `/healthz` is
 * 200 again within 5 s (the write probe runs every second). Mounting needs root: the test is
 * skipped with that reason otherwise.
 */
import { execFile } from "node:child_process";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, test } from "vitest";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanups.splice(0).reverse()) await step().catch(() => {});
});

/** Writes zeros to `path` until the file system is full (ENOSPC); bounded by the tmpfs size. */
async function fillDisk(path: string): Promise<void> {
  const file = await open(path, "w");
  const block = Buffer.alloc(256 * 1024);
  try {
    for (let i = 0; i < 4096; i++) await file.write(block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
  } finally {
    await file.close().catch(() => {});
  }
}

test.skipIf(!isRoot)(
  "after the disk fills and space comes back, /healthz is 200 again within 5 s without any traffic" +
    (isRoot ? "" : " (skipped: mounting a tmpfs needs root)"),
  async () => {
    const mountPoint = await mkdtemp(join(tmpdir(), "gw-tmpfs-"));
    await run("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", mountPoint]);
    cleanups.push(() => rm(mountPoint, { recursive: true, force: true }));
    cleanups.push(() => run("umount", ["-l", mountPoint]));
    const dataDir = join(mountPoint, "data");
    const secrets = makeSecrets();
    const config = {
      ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
      store: { driver: "sqlite", dir: dataDir },
    };
    const gw: GatewayProcess = await startGatewayProcess({ config, secrets, dataDir });
    cleanups.push(() => gw.kill());
    const health = async () => (await fetch(`${gw.url}/healthz`)).status;
    expect(await health()).toBe(200);

    const filler = join(mountPoint, "filler");
    await fillDisk(filler);
    // Webhooks until one is refused: the WAL may still have room for a few.
    let status = 0;
    for (let i = 0; i < 500 && status !== 503; i++) {
      const delivery = await esignDelivery(secrets.esign, "agreement.completed", {
        edit: (body) => {
          (body as { data: Record<string, unknown> }).data.padding = "p".repeat(64 * 1024);
        },
      });
      status = (await postWebhook(gw.url, "esign", delivery)).status;
    }
    expect(status).toBe(503);
    expect(await health()).toBe(503);

    await rm(filler);
    const freed = performance.now();
    let recovered = 0;
    for (let i = 0; i < 200; i++) {
      if ((await health()) === 200) {
        recovered = performance.now() - freed;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    console.log(`/healthz back to 200 ${Math.round(recovered)} ms after the space came back`);
    expect(recovered).toBeGreaterThan(0);
    expect(recovered).toBeLessThan(5000);
    // And it records again.
    expect((await postWebhook(gw.url, "esign", await esignDelivery(secrets.esign))).status).toBe(202);
  },
  120_000,
);
