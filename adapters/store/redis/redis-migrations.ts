/**
 * Store versions of the Redis key layout (redis-keys.ts), for the `redis` and `upstash`
 * drivers: the version is the key `{prefix}:version` (absent: version 1, the layout of release
 * 0.1.0), each applied step a field of the hash `{prefix}:migrations`. The policy is
 * src/store/store-version.ts. Several instances may start at once: steps are idempotent, and
 * the record only ever moves forward (one script checks and sets it).
 */
import {
  type MigrationPlan,
  type MigrationStep,
  migrateStore,
  planMigration,
  STORE_RELEASES,
  type VersionedStore,
} from "../../../src/store/store-version.ts";
import { createKeyLayout } from "./redis-keys.ts";
import { defineScript, type ScriptRunner } from "./script-runner.ts";

/** What a Redis step works on: the runner and the prefix's key layout. */
export interface RedisTarget {
  runner: ScriptRunner;
  keys: ReturnType<typeof createKeyLayout>;
}

/** Step N takes the key layout from version N to N + 1. */
export const REDIS_MIGRATION_STEPS: readonly MigrationStep<RedisTarget>[] = [
  {
    from: 1,
    // The version key and the history hash are the change: written by `record` below.
    description:
      "record the store version (key {prefix}:version) and the history of applied migrations ({prefix}:migrations)",
    apply() {},
  },
];

const readVersionScript = defineScript("store-version-read", "return redis.call('GET', KEYS[1])");

/** Sets the version (never backwards) and the step's history entry. */
const recordScript = defineScript(
  "store-version-record",
  `local current = tonumber(redis.call('GET', KEYS[1]) or '1')
local version = tonumber(ARGV[1])
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
if current < version then redis.call('SET', KEYS[1], ARGV[1]) end
return version`,
);

/** The key layout under `prefix` as a versioned store. */
export function redisVersionedStore(
  runner: ScriptRunner,
  prefix: string,
  now: () => number = Date.now,
): VersionedStore<RedisTarget> {
  const keys = createKeyLayout(prefix);
  const target: RedisTarget = { runner, keys };
  return {
    name: `the ${runner.name} store (prefix "${prefix}")`,
    async readVersion() {
      const value = await runner.run(readVersionScript, [keys.version], []);
      return value === null ? undefined : Number(value);
    },
    async applyStep(step) {
      await step.apply(target);
      const version = step.from + 1;
      const entry = JSON.stringify({
        description: step.description,
        release: STORE_RELEASES[version] ?? "unreleased",
        applied_at: new Date(now()).toISOString(),
      });
      await runner.run(recordScript, [keys.version, keys.migrations], [version, entry]);
    },
  };
}

/** Migrates the layout under `prefix` to this release's version; throws for a newer one. */
export function migrateRedisStore(runner: ScriptRunner, prefix: string): Promise<MigrationPlan<RedisTarget>> {
  return migrateStore(redisVersionedStore(runner, prefix), REDIS_MIGRATION_STEPS);
}

/** What migrating the layout under `prefix` would do (`gateway migrate --dry-run`). */
export function planRedisMigration(runner: ScriptRunner, prefix: string): Promise<MigrationPlan<RedisTarget>> {
  return planMigration(redisVersionedStore(runner, prefix), REDIS_MIGRATION_STEPS);
}
