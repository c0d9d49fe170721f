/**
 * `gateway backup` while webhooks arrive at a real gateway process, and `gateway restore` of
 * that copy into a new directory: every event acknowledged before the backup started is in it,
 * none sent after it finished; restore against a store in use is refused with one line; the
 * other store drivers are pointed at their own tools.
 */
import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { defaultTestConfig, makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { adminKeyHash, esignDelivery, listAllEventIds, postWebhook } from "../helpers/signed-requests.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const run = promisify(execFile);
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

async function gateway(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function configFile(config: object): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "gw-backup-config-")), "gateway.json");
  await writeFile(path, JSON.stringify(config));
  return path;
}

describe("gateway backup and restore (sqlite)", () => {
  it("copies a serving store with every event acknowledged before it started, and restores it into a new directory", async () => {
    const secrets = makeSecrets();
    const dataDir = await mkdtemp(join(tmpdir(), "gw-backup-data-"));
    const config = defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey));
    const running = await startGatewayProcess({ dataDir, secrets, config });
    cleanup.push(() => running.kill("SIGKILL"));
    const configPath = await configFile(config);

    // Webhooks keep arriving, 4 at a time, during the whole backup.
    const acked: { id: string; sentAt: number; ackedAt: number }[] = [];
    let sending = true;
    const sender = async () => {
      for (let i = 0; sending && i < 100_000; i++) {
        const sentAt = performance.now();
        const response = await postWebhook(running.url, "esign", await esignDelivery(secrets.esign));
        expect(response.status).toBe(202);
        acked.push({ id: ((await response.json()) as { id: string }).id, sentAt, ackedAt: performance.now() });
      }
    };
    const senders = Array.from({ length: 4 }, sender);
    while (acked.length < 40) await new Promise((resolve) => setTimeout(resolve, 20));

    const backupPath = join(await mkdtemp(join(tmpdir(), "gw-backup-")), "gateway-backup.db");
    const started = performance.now();
    const ackedBefore = acked.filter((a) => a.ackedAt < started).map((a) => a.id);
    const backup = await gateway(["backup", "--config", configPath, "--to", backupPath]);
    const finished = performance.now();
    // Some more arrive after it finished, then the senders stop.
    const count = acked.length;
    while (acked.length < count + 8) await new Promise((resolve) => setTimeout(resolve, 20));
    sending = false;
    await Promise.all(senders);
    expect(backup).toMatchObject({ code: 0, stderr: "" });
    expect(backup.stdout).toMatch(
      /^backed up the sqlite store in .* to .*gateway-backup\.db: \d+ pages, \d+ KiB, store version 2 \(gateway 0\.2\.0\), in \d+ ms\n$/,
    );
    const sentAfter = acked.filter((a) => a.sentAt > finished).map((a) => a.id);
    expect(sentAfter.length).toBeGreaterThan(0);

    // A restore while the gateway holds the store: one line, exit 1, nothing changed.
    const refused = await gateway(["restore", "--config", configPath, "--from", backupPath]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(/^gateway restore: the sqlite store in .* is in use by another gateway process/);
    const all = await listAllEventIds(running.url, secrets.adminKey, "source=esign");
    expect(all).toHaveLength(acked.length);
    expect(await running.kill("SIGTERM")).toBe(0);

    // Restored into a new directory and served there.
    const newDir = await mkdtemp(join(tmpdir(), "gw-restored-"));
    const newConfig = { ...config, store: { driver: "sqlite", dir: newDir } };
    const restored = await gateway(["restore", "--config", await configFile(newConfig), "--from", backupPath]);
    expect(restored).toMatchObject({ code: 0, stderr: "" });
    expect(restored.stdout).toMatch(
      /^restored .*gateway-backup\.db into the sqlite store in .* \(store version 2 \(gateway 0\.2\.0\)\)\n$/,
    );
    const again = await startGatewayProcess({ dataDir: newDir, secrets, config: newConfig });
    cleanup.push(() => again.kill("SIGKILL"));
    const inCopy = new Set(await listAllEventIds(again.url, secrets.adminKey, "source=esign"));
    for (const id of ackedBefore) expect(inCopy.has(id)).toBe(true);
    for (const id of sentAfter) expect(inCopy.has(id)).toBe(false);
    expect(await again.kill("SIGTERM")).toBe(0);
  }, 300_000);

  it("refuses a damaged copy and a missing one with one line, and names the tools of the other stores", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gw-restore-bad-"));
    const junk = join(dir, "junk.db");
    await writeFile(junk, Buffer.alloc(8192, 7));
    const sqlite = await configFile({ store: { driver: "sqlite", dir: join(dir, "store") } });
    await run("mkdir", ["-p", join(dir, "store")]);
    for (const [args, pattern] of [
      [["restore", "--config", sqlite, "--from", junk], /^gateway restore: .*junk\.db/],
      [
        ["restore", "--config", sqlite, "--from", join(dir, "missing.db")],
        /^gateway restore: .*missing\.db does not exist/,
      ],
      [["backup", "--config", sqlite, "--to", join(dir, "b.db")], /^gateway backup: there is no sqlite store in /],
      [
        [
          "backup",
          "--config",
          await configFile({ store: { driver: "redis", url: "redis://127.0.0.1:9" } }),
          "--to",
          "x",
        ],
        /^gateway backup: the redis store \(prefix "gw"\) is backed up by Redis itself, not by the gateway: use RDB snapshots \(BGSAVE\) or the AOF/,
      ],
      [
        ["restore", "--config", await configFile({ store: { driver: "memory" } }), "--from", junk],
        /nothing to restore/,
      ],
    ] as const) {
      const result = await gateway([...args]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(pattern);
    }
  }, 120_000);
});
