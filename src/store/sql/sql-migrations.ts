/**
 * Migration steps of the SQL stores (the Node sqlite driver and the Durable Objects' SQLite
 * storage run the same statements), and how they record a version: meta `schema_version` plus
 * one row per applied step in `store_migrations`. The policy (what is pending, refusing a newer
 * store, order) is src/store/store-version.ts; each runtime wraps `applySqlStep` in its own
 * transaction so that a step and its record commit together (an interrupted step leaves the
 * store at the previous version, and the next start runs it again).
 */
import { type MigrationStep, STORE_RELEASES } from "../store-version.ts";
import { META, META_SQL } from "./schema.ts";

/** The statements a SQL step needs (better-sqlite3 on Node, `ctx.storage.sql` on Workers). */
export interface SqlTarget {
  run(sql: string, ...params: (string | number | null)[]): void;
  get<Row>(sql: string, ...params: (string | number | null)[]): Row | undefined;
  now(): number;
}

/** Step N takes a SQL store from version N to N + 1. */
export const SQL_MIGRATION_STEPS: readonly MigrationStep<SqlTarget>[] = [
  {
    from: 1,
    description: "record the store version and the history of applied migrations (table store_migrations)",
    apply(target) {
      target.run(`CREATE TABLE IF NOT EXISTS store_migrations (
        version INTEGER PRIMARY KEY,
        description TEXT NOT NULL,
        release TEXT NOT NULL,
        applied_at INTEGER NOT NULL
      ) WITHOUT ROWID`);
    },
  },
];

/** The version a SQL store records (undefined: none, i.e. version 1). */
export function readSqlVersion(target: SqlTarget): number | undefined {
  const table = target.get<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'meta'");
  if (!table?.n) return undefined;
  return target.get<{ value: number }>(META_SQL.get, META.schemaVersion)?.value;
}

/** Runs `step` and records its version; the caller wraps both in one transaction. */
export function applySqlStep(target: SqlTarget, step: MigrationStep<SqlTarget>): void {
  const result = step.apply(target);
  if (result instanceof Promise) throw new Error("a SQL migration step must be synchronous (it runs in a transaction)");
  const version = step.from + 1;
  target.run(
    "INSERT INTO store_migrations (version, description, release, applied_at) VALUES (?, ?, ?, ?) ON CONFLICT (version) DO NOTHING",
    version,
    step.description,
    STORE_RELEASES[version] ?? "unreleased",
    target.now(),
  );
  target.run(META_SQL.set, META.schemaVersion, version);
}
