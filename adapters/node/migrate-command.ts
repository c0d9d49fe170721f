/**
 * `gateway migrate [--config FILE] [--dry-run]`: brings the configured store to this release's
 * store version (src/store/store-version.ts) without serving it, or with `--dry-run` lists the
 * pending steps and changes nothing. `gateway serve` migrates on its own at start; this command
 * lets an operator see and run the steps first (docs/backups-and-upgrades.md). A store from a
 * newer release, or a sqlite store another gateway holds, is refused with one line.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { defineCommand } from "citty";
import { describePlan, describeVersion, type MigrationPlan, STORE_VERSION } from "../../src/store/store-version.ts";
import { CliFailure } from "./cli-errors.ts";
import { describeStore, loadStoreConfig } from "./store-command-config.ts";

function report(what: string, plan: MigrationPlan<unknown>, dryRun: boolean): void {
  if (plan.pending.length === 0) {
    console.log(`${what} is at ${describeVersion(plan.from)}: nothing to migrate`);
    return;
  }
  console.log(
    `${what} is at ${describeVersion(plan.from)}; ${dryRun ? "pending" : "applied"} ${plan.pending.length} step(s) to ${describeVersion(plan.to)}:`,
  );
  for (const line of describePlan(plan)) console.log(`  ${line}`);
}

export const migrateCommand = defineCommand({
  meta: {
    name: "migrate",
    description: "Migrate the store to this release's store version (--dry-run: list the steps)",
  },
  args: {
    config: {
      type: "string",
      valueHint: "file.ts|file.json",
      description: "Configuration file (default: zero-config)",
    },
    "dry-run": { type: "boolean", description: "List the pending steps, change nothing" },
  },
  async run({ args }) {
    const store = await loadStoreConfig(args.config);
    const dryRun = args["dry-run"] === true;
    const what = describeStore(store);
    switch (store.driver) {
      case "sqlite":
      case "disk": {
        const { DATABASE_FILE, openDatabase } = await import("../store/sqlite/open-database.ts");
        if (!existsSync(join(store.dir, DATABASE_FILE))) {
          console.log(
            `${what} does not exist yet: nothing to migrate (a new store starts at ${describeVersion(STORE_VERSION)})`,
          );
          return;
        }
        let plan: MigrationPlan<unknown> | undefined;
        const planOnly = (found: MigrationPlan<unknown>) => {
          plan = found;
        };
        (await openDatabase({ dir: store.dir, cacheKiB: 8 * 1024, now: Date.now, planOnly })).close();
        if (!dryRun && plan && plan.pending.length > 0) {
          (await openDatabase({ dir: store.dir, cacheKiB: 8 * 1024, now: Date.now })).close();
        }
        if (plan) report(what, plan, dryRun);
        return;
      }
      case "redis":
      case "upstash": {
        const { planRedisMigration, migrateRedisStore } = await import("../store/redis/redis-migrations.ts");
        const runner =
          store.driver === "redis"
            ? await import("../store/redis/ioredis-runner.ts").then((m) =>
                m.openIoredisRunner({ url: m.resolveRedisUrl(store.url) }),
              )
            : await import("../store/upstash/upstash-runner.ts").then((m) =>
                m.createUpstashRunner(m.resolveUpstashConnection({ url: store.url })),
              );
        try {
          const prefix = store.prefix ?? "gw";
          report(what, await (dryRun ? planRedisMigration(runner, prefix) : migrateRedisStore(runner, prefix)), dryRun);
        } finally {
          await runner.close();
        }
        return;
      }
      case "memory":
        throw new CliFailure("the memory store keeps nothing between runs: there is nothing to migrate");
      case "postgres": {
        // The PostgreSQL layout is versioned in its own `schema_version` row (adapters/store/postgres/pg-schema.ts):
        // serve creates it, migrates an older layout at start and refuses a newer one.
        const { PG_SCHEMA_VERSION, migratePgSchema } = await import("../store/postgres/pg-schema.ts");
        let found: { from: number | undefined; steps: string[] };
        try {
          found = await migratePgSchema(store, dryRun);
        } catch (error) {
          throw new CliFailure(error instanceof Error ? error.message : String(error));
        }
        const current = `layout version ${PG_SCHEMA_VERSION}`;
        if (found.from === undefined) {
          console.log(`${what} has no tables yet: nothing to migrate (serve creates them at ${current})`);
        } else if (found.steps.length === 0) {
          console.log(`${what} is at ${current}: nothing to migrate`);
        } else {
          console.log(
            `${what} is at layout version ${found.from}; ${dryRun ? "pending" : "applied"} ${found.steps.length} step(s) to ${current}:`,
          );
          for (const line of found.steps) console.log(`  ${line}`);
        }
        return;
      }
      default: {
        const unknown: never = store;
        throw new CliFailure(`no migration for store driver ${(unknown as { driver: string }).driver}`);
      }
    }
  },
});
