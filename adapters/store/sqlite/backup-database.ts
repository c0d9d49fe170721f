/**
 * Online backup and restore of the sqlite store (`gateway backup`, `gateway restore`,
 * docs/backups-and-upgrades.md).
 *
 * Backup: a separate connection to the live database copies it with SQLite's online backup API
 * (better-sqlite3 `db.backup()`), all pages in ONE step, i.e. inside one read transaction. In WAL
 * mode a reader never blocks the writer, so the serving gateway's ingress does not wait at all
 * (its checkpoints cannot pass the snapshot until the copy ends, so the WAL grows meanwhile). The
 * snapshot starts after the command starts, and the gateway acknowledges a webhook only after
 * its transaction committed: every event acknowledged before the command started is in the copy.
 * The copy is written to `<to>.partial`, synced, checked, then renamed to `<to>`.
 *
 * Restore: the copy is checked first (`PRAGMA integrity_check`, a store version this release
 * can open) in a scratch file beside the store; then, holding the store's lock (refused while a
 * gateway holds it), the current database is moved aside to `gateway.db.before-restore` (its WAL
 * with it) and the checked copy renamed into place. No gateway can open the store in between.
 */
import { existsSync } from "node:fs";
import { copyFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { readSqlVersion, SQL_MIGRATION_STEPS } from "../../../src/store/sql/sql-migrations.ts";
import { describeVersion, planFrom, STORE_VERSION } from "../../../src/store/store-version.ts";
import { DATABASE_FILE, MARKER_FILE, sqliteTarget, syncDirectory, syncFile, takeLock } from "./open-database.ts";
import { pragmaOn, retainConnection, statementOn } from "./retained-statements.ts";

/** A backup or restore that cannot be done as asked: one line for the command to print. */
export class BackupRefusedError extends Error {
  override readonly name = "BackupRefusedError";
}

export interface BackupResult {
  pages: number;
  bytes: number;
  version: number;
  ms: number;
}

/** Checks a database file: integrity and a store version this release opens; its version. */
function checkCopy(path: string, what: string): number {
  try {
    return checkDatabase(path, what);
  } catch (error) {
    // SQLite's own refusal (not a database, malformed) is one line about the copy, not a crash.
    if ((error as { code?: unknown }).code?.toString().startsWith("SQLITE_")) {
      throw new BackupRefusedError(`${what} is not a usable SQLite database (${(error as Error).message})`);
    }
    throw error;
  }
}

function checkDatabase(path: string, what: string): number {
  const db = retainConnection(new Database(path, { fileMustExist: true, timeout: 5000 }));
  try {
    const [result] = pragmaOn(db, "integrity_check") as { integrity_check: string }[];
    if (result?.integrity_check !== "ok") {
      throw new BackupRefusedError(
        `${what} fails SQLite's integrity check (${result?.integrity_check ?? "no answer"})`,
      );
    }
    const target = sqliteTarget(db, Date.now);
    const events = statementOn(db, "SELECT count(*) AS n FROM sqlite_master WHERE name = 'events'").get() as {
      n: number;
    };
    if (events.n === 0) throw new BackupRefusedError(`${what} is not a gateway store (no events table)`);
    // Throws (one line) for a copy from a newer release.
    return planFrom(what, readSqlVersion(target), SQL_MIGRATION_STEPS).from;
  } finally {
    db.close();
  }
}

/** Copies the live database of `dir` to `to` while a gateway may be serving it. */
export async function backupDatabase(dir: string, to: string): Promise<BackupResult> {
  const started = performance.now();
  const source = join(dir, DATABASE_FILE);
  if (!existsSync(source)) throw new BackupRefusedError(`there is no sqlite store in ${dir} (no ${DATABASE_FILE})`);
  if (existsSync(to)) throw new BackupRefusedError(`${to} exists: back up to a new file`);
  if (!existsSync(dirname(to))) throw new BackupRefusedError(`the directory of ${to} does not exist`);
  const partial = `${to}.partial`;
  await rm(partial, { force: true });
  // A second connection: it only reads (the serving gateway keeps the lock and the writer).
  const db = retainConnection(new Database(source, { fileMustExist: true, timeout: 5000 }));
  let pages = 0;
  try {
    // One step for all pages: one read transaction, so writes meanwhile never restart the copy.
    const progress = await db.backup(partial, { progress: () => 0x7fffffff });
    pages = progress.totalPages;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
  try {
    await syncFile(partial);
    const version = checkCopy(partial, `the backup ${partial}`);
    // The check's connection leaves no WAL behind (the last close checkpoints it).
    await rename(partial, to);
    await syncDirectory(dirname(to));
    return { pages, bytes: (await stat(to)).size, version, ms: performance.now() - started };
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

export interface RestoreResult {
  version: number;
  /** Where the replaced database was kept, if there was one. */
  replaced?: string;
}

/** Replaces the database of `dir` with the backup `from`, refused while a gateway holds the store. */
export async function restoreDatabase(dir: string, from: string): Promise<RestoreResult> {
  if (!existsSync(from)) throw new BackupRefusedError(`${from} does not exist`);
  if (!existsSync(dir)) throw new BackupRefusedError(`the store directory ${dir} does not exist`);
  // Refused at once (StoreLockedError, one line) while a gateway holds the store.
  const lock = takeLock(dir);
  try {
    const target = join(dir, DATABASE_FILE);
    const scratch = `${target}.restore`;
    await rm(scratch, { force: true });
    // Checked as a copy inside the store directory: the backup file itself is never opened or changed.
    await copyFile(from, scratch);
    let version: number;
    try {
      version = checkCopy(scratch, `the backup ${from}`);
      await syncFile(scratch);
    } catch (error) {
      await rm(scratch, { force: true });
      throw error;
    }
    let replaced: string | undefined;
    if (existsSync(target)) {
      replaced = `${target}.before-restore`;
      await rename(target, replaced);
      if (existsSync(`${target}-wal`)) await rename(`${target}-wal`, `${replaced}-wal`);
      else await rm(`${replaced}-wal`, { force: true });
    }
    await rm(`${target}-shm`, { force: true });
    await rename(scratch, target);
    if (!existsSync(join(dir, MARKER_FILE))) {
      await writeFile(
        join(dir, MARKER_FILE),
        `${JSON.stringify({ store: "sqlite", database: DATABASE_FILE, restoredAt: new Date().toISOString() })}\n`,
      );
    }
    await syncDirectory(dir);
    return { version, replaced };
  } finally {
    lock.close();
  }
}

/** `store version 2 (gateway 0.2.0)`, and whether the next start migrates it. */
export function describeRestored(version: number): string {
  return version < STORE_VERSION
    ? `${describeVersion(version)}; the next start migrates it to ${describeVersion(STORE_VERSION)}`
    : describeVersion(version);
}
