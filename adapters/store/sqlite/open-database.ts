/**
 * Opening the sqlite store's database file, with everything that is Node-only: the pragmas,
 * the lock, the marker that records a database exists, the honest report of a recovered WAL,
 * and the one-time import of the removed journal store's files (journal-import/import-disk-journal.ts).
 *
 * Durability: WAL mode. The connection opened here only reads (on the event loop); the writer
 * thread (sqlite-writer-thread.js, through group-commit.ts) is the only connection that writes,
 * and it syncs the WAL (or lets SQLite sync it, `full`) before any write is acknowledged: an
 * acknowledged webhook survives power loss. WAL readers never wait for the writer.
 *
 * Ownership: a lock database beside it (`store.lock`) held in `locking_mode=EXCLUSIVE` after a
 * first write: from then on this process holds SQLite's own lock on that file until it closes,
 * and a second process gets SQLITE_BUSY at once and is refused with a clear error. The lock is
 * the kernel's: it dies with the process, so a crash never leaves a stale lock behind. (The
 * database itself cannot be held exclusively: the reader and the writer thread share it.)
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { open, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "../../../src/ops/logger.ts";
import type { StoreWiring } from "../../../src/store/contract.ts";
import { createEventSummarizer } from "../../../src/store/match-event-query.ts";
import { SCHEMA_STATEMENTS } from "../../../src/store/sql/schema.ts";
import {
  applySqlStep,
  readSqlVersion,
  SQL_MIGRATION_STEPS,
  type SqlTarget,
} from "../../../src/store/sql/sql-migrations.ts";
import { type MigrationPlan, type MigrationStep, planFrom } from "../../../src/store/store-version.ts";
import { inspectWal } from "./inspect-wal.ts";
import { importDiskJournal, OLD_JOURNAL, OLD_OUTBOX } from "./journal-import/import-disk-journal.ts";
import { FILE_MODE, preparePrivateDir, restrictPrivateDir, StoreDirError } from "./private-dir.ts";
import { pragmaOn, retainConnection, statementOn } from "./retained-statements.ts";

/** The database file in the store directory. */
export const DATABASE_FILE = "gateway.db";
/** Written once the database exists: its absence later is damage, not a fresh start. */
export const MARKER_FILE = "store.json";
/** Held exclusively by the process that owns the directory. */
export const LOCK_FILE = "store.lock";
/** The pid of the process holding the lock, so a refused second gateway can name it. */
export const OWNER_FILE = "store.owner";
/** A WAL grown by a burst is cut back to this size after the next checkpoint. */
export const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

export interface OpenDatabaseOptions extends StoreWiring {
  dir: string;
  /** Page cache in KiB, the bound on the database's memory. */
  cacheKiB: number;
  now: () => number;
  logger?: Logger;
  /** The migration steps and target version (tests add a synthetic later step); default this release's. */
  migrations?: { steps: readonly MigrationStep<SqlTarget>[]; target: number };
  /** Only report what migrating would do (`gateway migrate --dry-run`): nothing is changed. */
  planOnly?: (plan: MigrationPlan<SqlTarget>) => void;
}

/** Thrown when another process (or another open in this one) holds the database. */
export class StoreLockedError extends Error {
  override readonly name = "StoreLockedError";
  constructor(
    message: string,
    options: ErrorOptions & {
      /** The other process, when it recorded its pid. */
      ownerPid?: number;
    } = {},
  ) {
    super(message, options);
    this.ownerPid = options.ownerPid;
  }
  readonly ownerPid: number | undefined;
}

/** The reading connection of an open database, and the lock of its directory. */
export interface OpenedDatabase {
  db: Database.Database;
  /** The database file, for the writer thread. */
  path: string;
  /** Closes the reading connection (the last one checkpoints and removes the WAL), then the lock. */
  close(): void;
}

/** Opens (creating, importing or recovering as needed) and locks the database in `options.dir`. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<OpenedDatabase> {
  // 0700 and its files 0600, before and after SQLite creates its files (the WAL and shared memory
  // take the database's mode).
  await preparePrivateDir(options.dir);
  const lock = takeLock(options.dir);
  try {
    const db = await openLocked(options);
    await restrictPrivateDir(options.dir).catch((error: unknown) => {
      db.close();
      throw error;
    });
    return {
      db,
      path: join(options.dir, DATABASE_FILE),
      close() {
        db.close();
        lock.close();
      },
    };
  } catch (error) {
    lock.close();
    throw error;
  }
}

/** Takes the directory's lock, or throws `StoreLockedError` when another process holds it. */
export function takeLock(dir: string): Database.Database {
  const lock = retainConnection(new Database(join(dir, LOCK_FILE), { timeout: 0 }));
  try {
    pragmaOn(lock, "locking_mode = EXCLUSIVE");
    // Only the lock matters, not the file's content: no rollback journal, no syncs.
    pragmaOn(lock, "journal_mode = OFF");
    pragmaOn(lock, "synchronous = OFF");
    // The write that takes (and, in exclusive mode, keeps) the lock.
    lock.exec("CREATE TABLE IF NOT EXISTS owner (pid INTEGER); DELETE FROM owner");
    statementOn(lock, "INSERT INTO owner (pid) VALUES (?)").run(process.pid);
  } catch (error) {
    lock.close();
    if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) {
      const ownerPid = readOwnerPid(dir);
      const who = ownerPid === undefined ? "another gateway process" : `another gateway process (pid ${ownerPid})`;
      throw new StoreLockedError(`the sqlite store in ${dir} is in use by ${who}; stop that one first`, {
        cause: error,
        ownerPid,
      });
    }
    throw error;
  }
  // Read only while the lock is held by its writer, so a stale file is never believed.
  writeFileSync(join(dir, OWNER_FILE), `${JSON.stringify({ pid: process.pid })}\n`, { mode: FILE_MODE });
  return lock;
}

function readOwnerPid(dir: string): number | undefined {
  try {
    const pid = (JSON.parse(readFileSync(join(dir, OWNER_FILE), "utf8")) as { pid?: unknown }).pid;
    return typeof pid === "number" && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function openLocked(options: OpenDatabaseOptions): Promise<Database.Database> {
  const { dir, logger } = options;
  const path = join(dir, DATABASE_FILE);
  const marker = join(dir, MARKER_FILE);
  let created = false;
  if (!existsSync(path)) {
    if (existsSync(marker)) {
      const recorded = await readFile(marker, "utf8").catch(() => "");
      throw new StoreDirError(
        options.dir,
        `the sqlite store's database ${path} is missing, but ${marker} records that one was created ` +
          `(${recorded.trim()}); restore the database from a backup, or delete ${marker} to start empty on purpose`,
      );
    }
    if (existsSync(`${path}-wal`)) {
      throw new StoreDirError(
        options.dir,
        `${path}-wal exists without its database ${path}; restore the database or move the WAL aside`,
      );
    }
    if (existsSync(join(dir, OLD_JOURNAL)) || existsSync(join(dir, OLD_OUTBOX))) {
      const building = `${path}.import`;
      await rm(building, { force: true });
      try {
        await importDiskJournal(dir, building, options.now(), createEventSummarizer(options.services), logger);
      } catch (error) {
        await rm(building, { force: true });
        throw error;
      }
      await syncFile(building);
      await rename(building, path);
      await syncDirectory(dir);
    }
    created = true;
  }
  // Read before SQLite recovers it; reported only once the lock is ours (a live owner's WAL is not damage).
  const wal = await inspectWal(`${path}-wal`);
  const db = await prepareDatabase(path, options, created);
  if (created) {
    await writeFile(
      marker,
      `${JSON.stringify({ store: "sqlite", database: DATABASE_FILE, createdAt: new Date(options.now()).toISOString() })}\n`,
    );
    await syncFile(marker);
    await syncDirectory(dir);
  }
  if (wal) {
    logger?.warn("recovered the sqlite write-ahead log of an unclean shutdown", {
      database: path,
      committed_transactions_kept: wal.transactions,
      frames_kept: wal.keptFrames,
      uncommitted_frames_dropped: wal.uncommittedFrames,
      bytes_ignored: wal.ignoredBytes,
      note: "frames after the last commit were never acknowledged",
    });
  }
  return db;
}

/** Files `gateway.db.pre-migration-v<N>`: the database as it was before a migration from version N. */
const PRE_MIGRATION = /^gateway\.db\.pre-migration-v\d+$/;

/** The statements a migration step runs, on `db`. */
export function sqliteTarget(db: Database.Database, now: () => number): SqlTarget {
  return {
    run: (sql, ...params) => void statementOn(db, sql).run(...params),
    get: <Row>(sql: string, ...params: (string | number | null)[]) =>
      statementOn(db, sql).get(...params) as Row | undefined,
    now,
  };
}

/**
 * Opens `path` (this process holds the lock), applies the schema and migrates the store to this
 * release's version (src/store/store-version.ts), synced. A store from a newer release is refused
 * before anything is written. Before the first step on an existing store, a copy of the database
 * is written beside it (`gateway.db.pre-migration-v<N>`); the next start that finds the store
 * current removes it.
 */
async function prepareDatabase(
  path: string,
  options: OpenDatabaseOptions,
  created: boolean,
): Promise<Database.Database> {
  // A reader briefly waits (never in practice) while the writer thread restarts the WAL.
  const db = retainConnection(new Database(path, { timeout: 5000 }));
  try {
    pragmaOn(db, "journal_mode = WAL");
    pragmaOn(db, "synchronous = FULL");
    pragmaOn(db, `cache_size = -${Math.max(1024, Math.floor(options.cacheKiB))}`);
    // Memory-mapped pages would count towards RSS and hide the bound set by cache_size.
    pragmaOn(db, "mmap_size = 0");
    pragmaOn(db, "temp_store = MEMORY");
    // Deleted and replaced content is overwritten with zeros, so an erased event body
    // (docs/data-lifecycle.md) leaves no bytes behind in free space of the database file.
    pragmaOn(db, "secure_delete = ON");
    // A WAL grown by a burst is cut back to this size after the next checkpoint.
    pragmaOn(db, `journal_size_limit = ${WAL_SIZE_LIMIT}`);
    const target = sqliteTarget(db, options.now);
    const { steps, target: version } = options.migrations ?? { steps: SQL_MIGRATION_STEPS, target: undefined };
    // Throws (one line) for a store written by a newer release, before anything is written.
    const plan = planFrom(`the sqlite store ${path}`, readSqlVersion(target), steps, version);
    if (options.planOnly) {
      options.planOnly(plan);
      return db;
    }
    const dir = dirname(path);
    if (plan.pending.length > 0 && !created) {
      const kept = (await readdir(dir)).find((name) => PRE_MIGRATION.test(name));
      const copy = join(dir, kept ?? `${DATABASE_FILE}.pre-migration-v${plan.from}`);
      if (!kept) {
        // An interrupted migration's copy holds the older state: it is kept, no second one is made.
        // VACUUM INTO: a consistent, compact copy, and no better-sqlite3 object to collect later.
        await rm(`${copy}.partial`, { force: true });
        db.exec(`VACUUM INTO '${`${copy}.partial`.replaceAll("'", "''")}'`);
        await syncFile(`${copy}.partial`);
        await rename(`${copy}.partial`, copy);
        await syncDirectory(dir);
      }
      options.logger?.warn("migrating the sqlite store to this release's version", {
        database: path,
        from: plan.from,
        to: plan.to,
        steps: plan.pending.length,
        copy_before_migration: copy,
      });
    }
    // The base layout (version 1), idempotent; later changes are migration steps.
    db.transaction(() => {
      for (const statement of SCHEMA_STATEMENTS) db.exec(statement);
    }).immediate();
    // Each step commits with its version record: an interrupted migration resumes at the next start.
    for (const step of plan.pending) db.transaction(() => applySqlStep(target, step)).immediate();
    if (plan.pending.length === 0) {
      for (const name of await readdir(dir)) {
        if (PRE_MIGRATION.test(name)) await rm(join(dir, name), { force: true });
      }
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

export async function syncFile(path: string): Promise<void> {
  const handle = await open(path, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsyncs a directory, so that a created or renamed file in it survives power loss. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
