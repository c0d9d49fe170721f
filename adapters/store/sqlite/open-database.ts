/**
 * Opening the sqlite store's database file, with everything that is Node-only: the pragmas,
 * the lock, the marker that records a database exists, the honest report of a recovered WAL,
 * and the import of an old journal (journal-import/import-disk-journal.ts).
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
import { open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "../../../src/ops/logger.ts";
import { META, META_SQL, SCHEMA_STATEMENTS, SCHEMA_VERSION } from "../../../src/store/sql/schema.ts";
import { inspectWal } from "./inspect-wal.ts";
import { importDiskJournal, OLD_JOURNAL, OLD_OUTBOX } from "./journal-import/import-disk-journal.ts";
import { FILE_MODE, preparePrivateDir, restrictPrivateDir, StoreDirError } from "./private-dir.ts";

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

export interface OpenDatabaseOptions {
  dir: string;
  /** Page cache in KiB, the bound on the database's memory. */
  cacheKiB: number;
  now: () => number;
  logger?: Logger;
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
function takeLock(dir: string): Database.Database {
  const lock = new Database(join(dir, LOCK_FILE), { timeout: 0 });
  try {
    lock.pragma("locking_mode = EXCLUSIVE");
    // Only the lock matters, not the file's content: no journal, no syncs.
    lock.pragma("journal_mode = OFF");
    lock.pragma("synchronous = OFF");
    // The write that takes (and, in exclusive mode, keeps) the lock.
    lock.exec("CREATE TABLE IF NOT EXISTS owner (pid INTEGER); DELETE FROM owner");
    lock.prepare("INSERT INTO owner (pid) VALUES (?)").run(process.pid);
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
  const db = prepareDatabase(path, options.cacheKiB);
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

/** Opens `path` (this process holds the lock) and applies the schema, synced. */
function prepareDatabase(path: string, cacheKiB: number): Database.Database {
  // A reader briefly waits (never in practice) while the writer thread restarts the WAL.
  const db = new Database(path, { timeout: 5000 });
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma(`cache_size = -${Math.max(1024, Math.floor(cacheKiB))}`);
    // Memory-mapped pages would count towards RSS and hide the bound set by cache_size.
    db.pragma("mmap_size = 0");
    db.pragma("temp_store = MEMORY");
    // Deleted and replaced content is overwritten with zeros, so an erased event body
    // (docs/data-lifecycle.md) leaves no bytes behind in free space of the database file.
    db.pragma("secure_delete = ON");
    // A WAL grown by a burst is cut back to this size after the next checkpoint.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    db.transaction(() => {
      const stored = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'meta'").get()
        ? (db.prepare(META_SQL.get).get(META.schemaVersion) as { value: number } | undefined)?.value
        : undefined;
      if (stored !== undefined && stored > SCHEMA_VERSION) {
        throw new StoreDirError(
          dirname(path),
          `${path} was written by a newer gateway (schema ${stored}, this one reads ${SCHEMA_VERSION})`,
        );
      }
      for (const statement of SCHEMA_STATEMENTS) db.exec(statement);
      db.prepare(META_SQL.set).run(META.schemaVersion, SCHEMA_VERSION);
    }).immediate();
    return db;
  } catch (error) {
    db.close();
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

/** fsyncs a directory, so that a created or renamed file in it survives power loss. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
