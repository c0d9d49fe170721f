/**
 * Issue 29 row 8: the store holds raw bodies and personal data, so only the gateway's user may
 * read it: the store directory 0700 and every file in it 0600 (`gateway.db`, its `-wal` and
 * `-shm`, the lock, the marker), when `gateway serve` creates them (parents too) and when it
 * opens a store an older version left readable (0755 / 0644), checked with `stat` on the
 * running gateway's files after a webhook was recorded. (The zero-config `.data/` and
 * `dev-secrets.json`: test/cli/fail-closed.test.ts.)
 */
import { chmod, mkdtemp, readdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";

const running: GatewayProcess[] = [];
afterEach(async () => {
  for (const gateway of running.splice(0)) await gateway.kill();
});

/** `name -> mode` of the directory itself (`.`) and every entry in it. */
async function modes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = { ".": ((await stat(dir)).mode & 0o777).toString(8) };
  for (const name of await readdir(dir)) out[name] = ((await stat(join(dir, name))).mode & 0o777).toString(8);
  return out;
}

/** Starts a gateway on `storeDir` and records one webhook, so the WAL and shared memory exist. */
async function startAndRecord(storeDir: string, secrets = makeSecrets()) {
  const config = {
    ...defaultTestConfig(storeDir, adminKeyHash(secrets.adminKey)),
    store: { driver: "sqlite", dir: storeDir },
  };
  const gateway = await startGatewayProcess({ config, secrets });
  running.push(gateway);
  const answer = await postWebhook(gateway.url, "esign", await esignDelivery(secrets.esign));
  expect(answer.status).toBe(202);
  return { gateway, secrets };
}

const PRIVATE_FILES = ["gateway.db", "gateway.db-shm", "gateway.db-wal", "store.json", "store.lock", "store.owner"];

it("created: the directory (and the parents it made) 0700, every file 0600", { timeout: 240_000 }, async () => {
  const base = await mkdtemp(join(tmpdir(), "gw-modes-"));
  const storeDir = join(base, "var", "gateway");
  await startAndRecord(storeDir);
  const found = await modes(storeDir);
  expect(Object.keys(found)).toEqual(expect.arrayContaining(PRIVATE_FILES));
  for (const [name, mode] of Object.entries(found)) expect([name, mode]).toEqual([name, name === "." ? "700" : "600"]);
  expect(((await stat(join(base, "var"))).mode & 0o777).toString(8)).toBe("700");
});

it("opened: a store left readable by others is made private again at start", { timeout: 240_000 }, async () => {
  const base = await mkdtemp(join(tmpdir(), "gw-modes-"));
  const storeDir = join(base, "store");
  const { gateway, secrets } = await startAndRecord(storeDir);
  await gateway.kill();
  running.splice(0);
  // As a gateway before issue 29 (or a careless copy) left it.
  await chmod(storeDir, 0o755);
  for (const name of await readdir(storeDir)) await chmod(join(storeDir, name), 0o644);
  expect((await modes(storeDir))["gateway.db"]).toBe("644");

  await startAndRecord(storeDir, secrets);
  const found = await modes(storeDir);
  expect(found).toMatchObject({ ".": "700", "gateway.db": "600", "gateway.db-wal": "600", "gateway.db-shm": "600" });
  for (const [name, mode] of Object.entries(found)) expect([name, mode]).toEqual([name, name === "." ? "700" : "600"]);
});
