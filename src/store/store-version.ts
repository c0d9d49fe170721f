/**
 * Store versions and migrations: the one policy every store driver follows (SQLite, Redis and
 * Upstash, Durable Objects, and any later driver). Each driver records the version of its
 * layout in the store itself and implements `VersionedStore` (read the record, apply one step
 * and record its version); this file decides what is pending, refuses a store from a newer
 * release, and runs the steps in order (docs/backups-and-upgrades.md).
 *
 * - A store that records no version is version 1: the layout of release 0.1.0 (commit 3ace3ce),
 *   which recorded none (Redis, Durable Objects) or only `schema_version = 1` (SQLite).
 * - Step N takes a store from version N to N + 1. Steps are idempotent, and a driver records a
 *   step's version only once the step is complete (SQLite: in the step's own transaction), so an
 *   interrupted migration resumes at the first step not recorded.
 * - A store whose version is above `STORE_VERSION` was written by a newer release: refused
 *   (`StoreVersionError`, one line naming both versions), never opened, never changed.
 */

/** The store version this release writes. */
export const STORE_VERSION = 2;

/** The first release that wrote each store version (shown in messages and `gateway migrate`). */
export const STORE_RELEASES: Readonly<Record<number, string>> = {
  1: "0.1.0",
  2: "0.2.0",
};

/** One migration step of a driver: takes the store from version `from` to `from + 1`. */
export interface MigrationStep<Target> {
  /** The version this step starts from (the store's version before it). */
  from: number;
  /** What the step does, one line (`gateway migrate --dry-run` prints it). */
  description: string;
  /** Does the step's work; idempotent (safe to run again after an interruption). */
  apply(target: Target): void | Promise<void>;
}

/** What each driver provides for its store. */
export interface VersionedStore<Target> {
  /** Names the store in messages: `the sqlite store in .data`, `the redis store under prefix "gw"`. */
  readonly name: string;
  /** The recorded version, or undefined when the store records none (version 1). */
  readVersion(): Promise<number | undefined> | number | undefined;
  /** Runs `step` and records `step.from + 1` as the store's version (atomically when the store allows it). */
  applyStep(step: MigrationStep<Target>): Promise<void> | void;
}

/** A store from a newer release: refused with one line naming both versions. */
export class StoreVersionError extends Error {
  override readonly name = "StoreVersionError";
}

/** The release name of `version`, e.g. `store version 2 (0.2.0)`. */
export function describeVersion(version: number): string {
  const release = STORE_RELEASES[version];
  return release ? `store version ${version} (gateway ${release})` : `store version ${version} (a later gateway)`;
}

export interface MigrationPlan<Target> {
  /** The store's version now. */
  from: number;
  /** The version it will have. */
  to: number;
  /** The steps to run, in order (empty when the store is current). */
  pending: readonly MigrationStep<Target>[];
}

/**
 * What migrating `store` to `target` involves; throws `StoreVersionError` for a store newer than
 * `target`. `steps` must cover every version from 1 to `target - 1` once.
 */
export async function planMigration<Target>(
  store: VersionedStore<Target>,
  steps: readonly MigrationStep<Target>[],
  target: number = STORE_VERSION,
): Promise<MigrationPlan<Target>> {
  return planFrom(store.name, await store.readVersion(), steps, target);
}

/** `planMigration` for a store read synchronously (a Durable Object's SQL storage, better-sqlite3). */
export function planFrom<Target>(
  name: string,
  recorded: number | undefined,
  steps: readonly MigrationStep<Target>[],
  target: number = STORE_VERSION,
): MigrationPlan<Target> {
  checkSteps(steps, target);
  const from = recorded ?? 1;
  if (!Number.isInteger(from) || from < 1) {
    throw new StoreVersionError(`${name} records an invalid store version (${String(recorded)})`);
  }
  if (from > target) {
    throw new StoreVersionError(
      `${name} was written by a newer gateway: ${describeVersion(from)}; this gateway (${STORE_RELEASES[target] ?? "this release"}) reads ${describeVersion(target)} and older: upgrade the gateway, or restore a backup made by this release`,
    );
  }
  return { from, to: target, pending: steps.filter((step) => step.from >= from && step.from < target) };
}

/**
 * Migrates `store` forward to `target`, one recorded step at a time; `onStep` hears each step
 * before it runs. Returns the plan it carried out (nothing pending: nothing done).
 */
export async function migrateStore<Target>(
  store: VersionedStore<Target>,
  steps: readonly MigrationStep<Target>[],
  options: { target?: number; onStep?(step: MigrationStep<Target>): void } = {},
): Promise<MigrationPlan<Target>> {
  const plan = await planMigration(store, steps, options.target);
  for (const step of plan.pending) {
    options.onStep?.(step);
    await store.applyStep(step);
  }
  return plan;
}

/** `migrateStore` for a store whose steps run synchronously (each in the driver's transaction). */
export function migrateStoreSync<Target>(
  store: { readonly name: string; readVersion(): number | undefined; applyStep(step: MigrationStep<Target>): void },
  steps: readonly MigrationStep<Target>[],
  options: { target?: number } = {},
): MigrationPlan<Target> {
  const plan = planFrom(store.name, store.readVersion(), steps, options.target);
  for (const step of plan.pending) store.applyStep(step);
  return plan;
}

/** One line per pending step: `1 -> 2: record the store version ...`. */
export function describePlan(plan: MigrationPlan<unknown>): string[] {
  return plan.pending.map((step) => `${step.from} -> ${step.from + 1}: ${step.description}`);
}

function checkSteps(steps: readonly MigrationStep<unknown>[], target: number): void {
  for (let version = 1; version < target; version++) {
    const found = steps.filter((step) => step.from === version).length;
    if (found !== 1) throw new Error(`store migrations: ${found} steps from version ${version} (expected 1)`);
  }
}
