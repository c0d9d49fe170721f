/**
 * Upgrading a store written by release 0.1.0 (commit 3ace3ce, the fixture in
 * test/store/fixtures/3ace3ce/): a real gateway of this release opens it, migrates it (keeping a
 * copy of the old file until the next successful start), and every event, dedupe mark,
 * delivery state and pending retry is there; the pending retries reach their destination once
 * it is up. A store from a newer release is refused with one line naming both versions, and
 * `gateway migrate` lists and applies the steps.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { startWebhookReceiver, type WebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { startGatewayProcess } from "../helpers/gateway-process.ts";
import { esignDelivery, listAllEventIds, postWebhook, staffingDelivery } from "../helpers/signed-requests.ts";
import {
  FIXTURE_DIR,
  FIXTURE_ESIGN,
  FIXTURE_EVENTS,
  FIXTURE_SECRETS,
  FIXTURE_STAFFING,
  FIXTURE_WHSEC,
  type FixtureManifest,
  fixtureConfig,
} from "./fixtures/fixture-3ace3ce.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const run = promisify(execFile);
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

const manifest = JSON.parse(await readFile(join(FIXTURE_DIR, "manifest.json"), "utf8")) as FixtureManifest;

/** A data dir holding a copy of the fixture store. */
async function fixtureCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gw-upgrade-"));
  await copyFile(join(FIXTURE_DIR, "gateway.db"), join(dir, "gateway.db"));
  await copyFile(join(FIXTURE_DIR, "store.json"), join(dir, "store.json"));
  return dir;
}

/** Reads meta and the migration history of a closed store. */
function readVersions(dir: string, file = "gateway.db") {
  const db = new Database(join(dir, file), { readonly: true });
  try {
    const version = (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: number })
      .value;
    const history = db.prepare("SELECT name FROM sqlite_master WHERE name = 'store_migrations'").get()
      ? (db.prepare("SELECT version, release FROM store_migrations ORDER BY version").all() as object[])
      : [];
    return { version, history };
  } finally {
    db.close();
  }
}

async function configFile(dataDir: string, urls: { up: string; down: string; rejects: string }): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "gw-upgrade-config-")), "gateway.json");
  await writeFile(path, JSON.stringify(fixtureConfig(dataDir, urls)));
  return path;
}

/** Runs `gateway <args>`; exit code, stdout and stderr. */
async function gateway(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        NO_COLOR: "1",
        TEST_ESIGN_SECRET: FIXTURE_SECRETS.esign,
        TEST_STAFFING_SECRET: FIXTURE_SECRETS.staffing,
        TEST_WHSEC: FIXTURE_WHSEC,
      },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("the 3ace3ce (0.1.0) store fixture", () => {
  it("holds the states the upgrade test relies on", async () => {
    expect(manifest.eventIds).toHaveLength(FIXTURE_EVENTS);
    expect(manifest.counts).toEqual({
      up: { delivered: FIXTURE_EVENTS },
      down: { "failed-retrying": FIXTURE_EVENTS },
      rejects: { dead: FIXTURE_EVENTS },
    });
    // Read from a copy: opening the fixture itself would leave SQLite's -shm file beside it.
    expect(readVersions(await fixtureCopy())).toEqual({ version: 1, history: [] });
  });

  it("opens with this release: events, dedupe marks, delivery states kept, pending retries delivered", async () => {
    const dataDir = await fixtureCopy();
    const receivers: Record<"up" | "down" | "rejects", WebhookReceiver> = {
      up: await startWebhookReceiver(() => ({ status: 200 })),
      down: await startWebhookReceiver(() => ({ status: 200 })),
      rejects: await startWebhookReceiver(() => ({ status: 500 })),
    };
    cleanup.push(...Object.values(receivers).map((r) => () => r.close()));
    const urls = { up: receivers.up.url, down: receivers.down.url, rejects: receivers.rejects.url };
    const start = () =>
      startGatewayProcess({
        dataDir,
        secrets: FIXTURE_SECRETS,
        env: { TEST_WHSEC: FIXTURE_WHSEC },
        config: fixtureConfig(dataDir, urls),
      });
    let running = await start();
    cleanup.push(() => running.kill("SIGKILL"));
    expect(running.lines.some((line) => line.includes("migrating the sqlite store"))).toBe(true);
    const copy = join(dataDir, "gateway.db.pre-migration-v1");
    expect(existsSync(copy)).toBe(true);
    expect(readVersions(dataDir).version).toBe(2);

    // Every event of the log (the gateway's own `gateway.*` events aside).
    const upstreamEvents = async () =>
      [
        ...(await listAllEventIds(running.url, FIXTURE_SECRETS.adminKey, "source=esign")),
        ...(await listAllEventIds(running.url, FIXTURE_SECRETS.adminKey, "source=staffing")),
      ].sort();
    expect(await upstreamEvents()).toEqual([...manifest.eventIds].sort());

    // Every dedupe mark: the same upstream events, sent again (freshly signed), are duplicates.
    for (const [i, uniqueId] of FIXTURE_ESIGN.entries()) {
      const response = await postWebhook(
        running.url,
        "esign",
        await esignDelivery(FIXTURE_SECRETS.esign, "agreement.completed", { uniqueId }),
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ id: manifest.eventIds[i], duplicate: true });
    }
    for (const [i, uniqueId] of FIXTURE_STAFFING.entries()) {
      const response = await postWebhook(
        running.url,
        "staffing",
        await staffingDelivery(FIXTURE_SECRETS.staffing, "candidate.accepted", { uniqueId }),
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ id: manifest.eventIds[FIXTURE_ESIGN.length + i], duplicate: true });
    }

    // The pending retries reach the destination that is now up (a retry is due 30 s after its failure).
    await waitFor(
      "the pending retries to be delivered",
      () => new Set(receivers.down.ids()).size === FIXTURE_EVENTS,
      120_000,
    );
    expect([...new Set(receivers.down.ids())].sort()).toEqual([...manifest.eventIds].sort());
    const headers = { authorization: `Bearer ${FIXTURE_SECRETS.adminKey}` };
    type Destination = { id: string; counts: Record<string, number> };
    const counts = async () => {
      const response = await fetch(`${running.url}/destinations`, { headers });
      const { destinations } = (await response.json()) as { destinations: Destination[] };
      return Object.fromEntries(destinations.map((d) => [d.id, d.counts]));
    };
    await waitFor("the retries to be recorded", async () => (await counts()).down?.delivered === FIXTURE_EVENTS);
    // Delivered stays delivered, dead stays dead: nothing was sent again.
    expect(await counts()).toEqual({
      up: { delivered: FIXTURE_EVENTS },
      down: { delivered: FIXTURE_EVENTS },
      rejects: { dead: FIXTURE_EVENTS },
    });
    expect(receivers.up.requests).toHaveLength(0);
    expect(receivers.rejects.requests).toHaveLength(0);

    expect(await running.kill("SIGTERM")).toBe(0);
    // The copy is the 0.1.0 store as it was: version 1, every event.
    expect(readVersions(dataDir, "gateway.db.pre-migration-v1")).toEqual({ version: 1, history: [] });
    const countEvents = (path: string) => {
      const db = new Database(path, { readonly: true });
      const { n } = db.prepare("SELECT count(*) AS n FROM events").get() as { n: number };
      db.close();
      return n;
    };
    expect(countEvents(copy)).toBe(countEvents(join(await fixtureCopy(), "gateway.db")));
    expect(readVersions(dataDir)).toEqual({ version: 2, history: [{ version: 2, release: "0.2.0" }] });
    // The next successful start removes the copy; nothing is migrated again.
    running = await start();
    expect(running.lines.some((line) => line.includes("migrating the sqlite store"))).toBe(false);
    expect(existsSync(copy)).toBe(false);
    expect(await upstreamEvents()).toEqual([...manifest.eventIds].sort());
    expect(await running.kill("SIGTERM")).toBe(0);
  }, 240_000);

  it("refuses a store from a newer release with one line naming both versions, and leaves it as it is", async () => {
    const dataDir = await fixtureCopy();
    const db = new Database(join(dataDir, "gateway.db"));
    db.prepare("UPDATE meta SET value = 99 WHERE key = 'schema_version'").run();
    db.close();
    const before = await readFile(join(dataDir, "gateway.db"));
    const config = await configFile(dataDir, {
      up: "http://127.0.0.1:9/",
      down: "http://127.0.0.1:9/",
      rejects: "http://127.0.0.1:9/",
    });
    for (const args of [
      ["serve", "--config", config, "--port", "0"],
      ["migrate", "--config", config, "--dry-run"],
    ]) {
      const result = await gateway(args);
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /written by a newer gateway: store version 99 .*reads store version 2 \(gateway 0\.2\.0\)/,
      );
      expect(lines[0]).not.toMatch(/\bat /);
    }
    expect((await readFile(join(dataDir, "gateway.db"))).equals(before)).toBe(true);
  }, 120_000);

  it("`gateway migrate --dry-run` lists the pending steps and changes nothing; without it applies them", async () => {
    const dataDir = await fixtureCopy();
    const config = await configFile(dataDir, {
      up: "http://127.0.0.1:9/",
      down: "http://127.0.0.1:9/",
      rejects: "http://127.0.0.1:9/",
    });
    const dry = await gateway(["migrate", "--config", config, "--dry-run"]);
    expect(dry).toMatchObject({ code: 0, stderr: "" });
    expect(dry.stdout).toContain(
      "is at store version 1 (gateway 0.1.0); pending 1 step(s) to store version 2 (gateway 0.2.0):",
    );
    expect(dry.stdout).toContain("1 -> 2: record the store version");
    expect(readVersions(dataDir)).toEqual({ version: 1, history: [] });
    expect(existsSync(join(dataDir, "gateway.db.pre-migration-v1"))).toBe(false);

    const applied = await gateway(["migrate", "--config", config]);
    expect(applied).toMatchObject({ code: 0, stderr: "" });
    expect(applied.stdout).toContain("applied 1 step(s) to store version 2");
    expect(readVersions(dataDir)).toEqual({ version: 2, history: [{ version: 2, release: "0.2.0" }] });
    expect(existsSync(join(dataDir, "gateway.db.pre-migration-v1"))).toBe(true);

    const again = await gateway(["migrate", "--config", config, "--dry-run"]);
    expect(again.stdout).toContain("is at store version 2 (gateway 0.2.0): nothing to migrate");
  }, 120_000);
});
