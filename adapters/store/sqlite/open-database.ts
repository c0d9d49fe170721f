/**
 * Opening the sqlite store's database file, with everything that is Node-only: the pragmas,
 * the lock, the marker that records a database exists, the honest report of a recovered WAL,
 * and the import of an old journal (import-disk-journal.ts).
 *
 * Durability: WAL mode. In the default `wal-fdatasync` mode SQLite runs with
 * `synchronous=NORMAL` and group-commit.ts fdatasyncs the WAL after each group of commits,
 * off the event loop, before any write of the group resolves: an acknowledged webhook survives
 * power loss, as with `FULL`. `NORMAL` alone would NOT be enough: it syncs only at checkpoints,
 * so the last commits before a power cut could vanish after their 202 was sent. The `full`
 * mode (`synchronous=FULL`, SQLite syncs inside each commit) blocks the event loop for the sync.
 *
 * Ownership: `locking_mode=EXCLUSIVE`, set before the first access, plus a write at open: from
 * then on this connection holds SQLite's own lock on the file until it closes, and a second
 * process (or a second open in this one) gets SQLITE_BUSY at once and is refused with a clear
 * error. The lock is the kernel's: it dies with the process, so a crash never leaves a stale
 * lock behind. In this mode SQLite keeps the WAL index in heap memory (no `-shm` file).
 */
import { existsSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "../../../src/ops/logger.ts";
import { META, META_SQL, SCHEMA_STATEMENTS, SCHEMA_VERSION } from "../../../src/store/sql/schema.ts";
import { syncDirectory } from "../disk/compact-journal.ts";
import { importDiskJournal, OLD_JOURNAL, OLD_OUTBOX } from "./import-disk-journal.ts";
import { inspectWal } from "./inspect-wal.ts";

/** The database file in the store directory. */
export const DATABASE_FILE = "gateway.db";
/** Written once the database exists: its absence later is damage, not a fresh start. */
export const MARKER_FILE = "store.json";

export interface OpenDatabaseOptions {
  dir: string;
  /** Page cache in KiB, the bound on the database's memory. */
  cacheKiB: number;
  /** Who syncs the WAL: this driver after each group commit, or SQLite inside each commit. */
  durability: "wal-fdatasync" | "full";
  now: () => number;
  logger?: Logger;
}

/** Thrown when another process (or another open in this one) holds the database. */
export class StoreLockedError extends Error {
  override readonly name = "StoreLockedError";
}

/** Opens (creating, importing or recovering as needed) and locks the database in `options.dir`. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database.Database> {
  const { dir, logger } = options;
  await mkdir(dir, { recursive: true });
  const path = join(dir, DATABASE_FILE);
  const marker = join(dir, MARKER_FILE);
  let created = false;
  if (!existsSync(path)) {
    if (existsSync(marker)) {
      const recorded = await readFile(marker, "utf8").catch(() => "");
      throw new Error(
        `the sqlite store's database ${path} is missing, but ${marker} records that one was created ` +
          `(${recorded.trim()}); restore the database from a backup, or delete ${marker} to start empty on purpose`,
      );
    }
    if (existsSync(`${path}-wal`)) {
      throw new Error(`${path}-wal exists without its database ${path}; restore the database or move the WAL aside`);
    }
    if (existsSync(join(dir, OLD_JOURNAL)) || existsSync(join(dir, OLD_OUTBOX))) {
      const building = `${path}.import`;
      await rm(building, { force: true });
      try {
        await importDiskJournal(dir, building, options.now(), logger);
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
  const db = lockAndPrepare(path, options.cacheKiB, options.durability);
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

/** Opens `path`, takes the exclusive lock with a first write, and applies the schema. */
function lockAndPrepare(
  path: string,
  cacheKiB: number,
  durability: OpenDatabaseOptions["durability"],
): Database.Database {
  const db = new Database(path, { timeout: 0 });
  try {
    // Before anything touches the file: the lock mode, then WAL.
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    db.pragma(durability === "full" ? "synchronous = FULL" : "synchronous = NORMAL");
    db.pragma(`cache_size = -${Math.max(1024, Math.floor(cacheKiB))}`);
    // Memory-mapped pages would count towards RSS and hide the bound set by cache_size.
    db.pragma("mmap_size = 0");
    db.pragma("temp_store = MEMORY");
    // Deleted and replaced content is overwritten with zeros, so an erased event body
    // (docs/data-lifecycle.md) leaves no bytes behind in free space of the database file.
    db.pragma("secure_delete = ON");
    // A WAL grown by a burst is cut back to this size after the next checkpoint.
    db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    db.transaction(() => {
      const stored = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'meta'").get()
        ? (db.prepare(META_SQL.get).get(META.schemaVersion) as { value: number } | undefined)?.value
        : undefined;
      if (stored !== undefined && stored > SCHEMA_VERSION) {
        throw new Error(`${path} was written by a newer gateway (schema ${stored}, this one reads ${SCHEMA_VERSION})`);
      }
      for (const statement of SCHEMA_STATEMENTS) db.exec(statement);
      // The write that takes (and, in exclusive mode, keeps) the lock.
      db.prepare(META_SQL.set).run(META.schemaVersion, SCHEMA_VERSION);
    }).immediate();
    return db;
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) {
      throw new StoreLockedError(
        `the sqlite store ${path} is in use by another gateway process (SQLite holds its lock); stop that one first`,
        { cause: error },
      );
    }
    throw error;
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
