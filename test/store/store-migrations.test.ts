/**
 * The migration policy (src/store/store-version.ts) with a real later step: a synthetic step 2 -> 3
 * on the sqlite store (a column added and filled) that fails once half-way, and the Redis key
 * layout's version record on a real redis-server. Interrupted migrations resume, finished ones
 * are not repeated, newer stores are refused, and the pre-migration copy lives until the next
 * successful start.
 */
import { existsSync } from "node:fs";
import { copyFile, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openIoredisRunner } from "../../adapters/store/redis/ioredis-runner.ts";
import { migrateRedisStore, planRedisMigration } from "../../adapters/store/redis/redis-migrations.ts";
import { openDatabase } from "../../adapters/store/sqlite/open-database.ts";
import { SQL_MIGRATION_STEPS, type SqlTarget } from "../../src/store/sql/sql-migrations.ts";
import { type MigrationStep, planFrom, STORE_VERSION, StoreVersionError } from "../../src/store/store-version.ts";
import { startRedisServer } from "../helpers/redis-server.ts";
import { FIXTURE_DIR } from "./fixtures/fixture-3ace3ce.ts";

const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

async function fixtureCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gw-migrations-"));
  await copyFile(join(FIXTURE_DIR, "gateway.db"), join(dir, "gateway.db"));
  await copyFile(join(FIXTURE_DIR, "store.json"), join(dir, "store.json"));
  return dir;
}

function inspect(dir: string) {
  const db = new Database(join(dir, "gateway.db"), { readonly: true });
  try {
    const version = (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: number })
      .value;
    const columns = (db.prepare("PRAGMA table_info(events)").all() as { name: string }[]).map((c) => c.name);
    const history = (
      db.prepare("SELECT version FROM store_migrations ORDER BY version").all() as { version: number }[]
    ).map((r) => r.version);
    const filled = columns.includes("kind")
      ? (db.prepare("SELECT count(*) AS n FROM events WHERE kind IS NOT NULL").get() as { n: number }).n
      : 0;
    const events = (db.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n;
    return { version, columns, history, filled, events };
  } finally {
    db.close();
  }
}

describe("store migrations", () => {
  it("runs a later step once, resumes it after a failure half-way, and keeps the copy until the next good start", async () => {
    const dir = await fixtureCopy();
    let failOnce = true;
    const synthetic: MigrationStep<SqlTarget> = {
      from: 2,
      description: "add events.kind (synthetic test step)",
      apply(target) {
        target.run("ALTER TABLE events ADD COLUMN kind TEXT");
        target.run("UPDATE events SET kind = CASE WHEN source_id = 'gateway' THEN 'own' ELSE 'upstream' END");
        if (failOnce) {
          failOnce = false;
          throw new Error("power cut in the middle of the step");
        }
      },
    };
    const migrations = { steps: [...SQL_MIGRATION_STEPS, synthetic], target: 3 };
    const open = () => openDatabase({ dir, cacheKiB: 2048, now: Date.now, migrations });

    await expect(open()).rejects.toThrow(/power cut/);
    // Step 1 -> 2 committed; the failed step left nothing behind.
    expect(inspect(dir)).toMatchObject({ version: 2, history: [2], filled: 0 });
    expect(inspect(dir).columns).not.toContain("kind");
    const copy = join(dir, "gateway.db.pre-migration-v1");
    expect(existsSync(copy)).toBe(true);

    (await open()).close();
    const after = inspect(dir);
    expect(after).toMatchObject({ version: 3, history: [2, 3] });
    expect(after.filled).toBe(after.events);
    // The interrupted run's copy (from version 1) is the one kept: the oldest state.
    expect(existsSync(copy)).toBe(true);
    expect(existsSync(join(dir, "gateway.db.pre-migration-v2"))).toBe(false);

    // Nothing pending: nothing runs again, and the copy goes.
    (await open()).close();
    expect(inspect(dir)).toMatchObject({ version: 3, history: [2, 3] });
    expect(existsSync(copy)).toBe(false);

    // This release (store version 2) refuses the store the later one wrote, by name.
    await expect(openDatabase({ dir, cacheKiB: 2048, now: Date.now })).rejects.toThrow(
      /written by a newer gateway: store version 3 .* reads store version 2 \(gateway 0\.2\.0\) and older/,
    );
  }, 60_000);

  it("plans from the recorded version and checks its steps", () => {
    expect(planFrom("s", undefined, SQL_MIGRATION_STEPS)).toMatchObject({ from: 1, to: STORE_VERSION });
    expect(planFrom("s", STORE_VERSION, SQL_MIGRATION_STEPS).pending).toEqual([]);
    expect(() => planFrom("s", STORE_VERSION + 1, SQL_MIGRATION_STEPS)).toThrow(StoreVersionError);
    expect(() => planFrom("s", 0, SQL_MIGRATION_STEPS)).toThrow(/invalid store version/);
    // A target without a step for every version is a programming error, caught before any change.
    expect(() => planFrom("s", 1, SQL_MIGRATION_STEPS, 3)).toThrow(/0 steps from version 2/);
  });

  it("records the Redis key layout's version once, and refuses a newer one", async () => {
    const redis = await startRedisServer();
    cleanup.push(() => redis.stop());
    const runner = await openIoredisRunner({ url: redis.url });
    cleanup.push(() => runner.close());
    expect(await planRedisMigration(runner, "gw")).toMatchObject({ from: 1, to: 2 });
    expect((await migrateRedisStore(runner, "gw")).pending).toHaveLength(1);
    expect(await runner.client.get("{gw}:version")).toBe("2");
    expect(Object.keys(await runner.client.hgetall("{gw}:migrations"))).toEqual(["2"]);
    expect((await migrateRedisStore(runner, "gw")).pending).toHaveLength(0);
    // Another prefix is another store.
    expect(await planRedisMigration(runner, "other")).toMatchObject({ from: 1 });
    await runner.client.set("{gw}:version", "7");
    await expect(migrateRedisStore(runner, "gw")).rejects.toThrow(
      /the redis store \(prefix "gw"\) was written by a newer gateway: store version 7/,
    );
    expect(await runner.client.get("{gw}:version")).toBe("7");
  }, 60_000);
});
