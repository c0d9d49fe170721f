/**
 * The sqlite driver: the embedded default store (config `store.driver: "sqlite"`, alias
 * `"disk"`). One database file per data directory holds the event log, dedupe marks, shared
 * values and the outbox; the `StoreDriver` and the `OutboxStore` are two views of it sharing
 * one connection and one group commit (docs/storage.md#the-sqlite-store).
 *
 * `sqliteStore(options)` and `sqliteOutbox(options)` may be called separately (the gateway's
 * wiring asks for a store and an outbox): the second call on the same directory in this
 * process joins the database the first one opened, and the database closes when both are
 * closed. A second store (or outbox) on a directory already open here is refused, as is any
 * open of a directory another process holds.
 */
import { realpath } from "node:fs/promises";
import type Database from "better-sqlite3";
import type { OutboxFactory, OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import type { Logger } from "../../../src/ops/logger.ts";
import type { StoreDriver, StoreFactory, StoreWiring } from "../../../src/store/contract.ts";
import { createEventSummarizer } from "../../../src/store/match-event-query.ts";
import { createGroupCommit, type GroupCommit } from "./group-commit.ts";
import { openDatabase, StoreLockedError, WAL_SIZE_LIMIT } from "./open-database.ts";
import { preparePrivateDir } from "./private-dir.ts";
import { createSqliteOutboxDriver } from "./sqlite-outbox.ts";
import { createSqliteStoreDriver } from "./sqlite-store.ts";

export interface SqliteStorageOptions extends StoreWiring {
  /** Directory of the database (`gateway.db`); created when missing. Default `.data` in config. */
  dir: string;
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** SQLite page cache in KiB: the store's memory bound. Default 32768 (32 MiB). */
  cacheKiB?: number;
  /**
   * Who makes a commit durable before it is acknowledged, on the writer thread: `wal-fdatasync`
   * (default) syncs the WAL after each group commit; `full` lets SQLite sync inside each commit
   * (`synchronous=FULL`). Both are durable (docs/storage.md#the-sqlite-store).
   */
  durability?: "wal-fdatasync" | "full";
  /** Rows removed per retention transaction; each is a short write between appends. Default 500. */
  purgeBatchSize?: number;
  /** Where start-up reports go (recovered WAL, import). Default: none. */
  logger?: Logger;
}

export interface SqliteStorage {
  store: StoreDriver;
  outbox: OutboxStore;
}

interface OpenStorage {
  /** The reading connection (the writer thread has its own). */
  db: Database.Database;
  writer: GroupCommit;
  /** Closes the reading connection and the directory's lock. */
  closeDatabase(): void;
  options: Required<Omit<SqliteStorageOptions, "logger" | "services">>;
  users: Set<"store" | "outbox">;
}

/** One user's share of an open database. */
interface Share extends OpenStorage {
  /** Gives the share back; the last one closes the database. */
  release(): Promise<void>;
}

/** Databases open in this process, by real directory path (pending opens included). */
const open = new Map<string, Promise<OpenStorage>>();

async function acquire(options: SqliteStorageOptions, user: "store" | "outbox"): Promise<Share> {
  // Created first, so both halves find the same real path (symlinks resolved) for one directory.
  await preparePrivateDir(options.dir);
  const key = await realpath(options.dir);
  let pending = open.get(key);
  if (!pending) {
    pending = (async () => {
      const resolved = {
        dir: options.dir,
        now: options.now ?? Date.now,
        cacheKiB: options.cacheKiB ?? 32 * 1024,
        purgeBatchSize: options.purgeBatchSize ?? 500,
        durability: options.durability ?? "wal-fdatasync",
      };
      const opened = await openDatabase({ ...resolved, logger: options.logger, services: options.services });
      let writer: GroupCommit;
      try {
        writer = await createGroupCommit({
          path: opened.path,
          durability: resolved.durability,
          cacheKiB: Math.max(1024, Math.floor(resolved.cacheKiB)),
          walSizeLimit: WAL_SIZE_LIMIT,
        });
      } catch (error) {
        opened.close();
        throw error;
      }
      return {
        db: opened.db,
        writer,
        closeDatabase: opened.close,
        options: resolved,
        users: new Set<"store" | "outbox">(),
      };
    })();
    open.set(key, pending);
    pending.catch(() => open.delete(key));
  }
  const storage = await pending;
  if (storage.users.has(user)) {
    throw new StoreLockedError(`the sqlite ${user} in ${options.dir} is already open in this process`);
  }
  storage.users.add(user);
  const release = async () => {
    if (!storage.users.delete(user)) return;
    if (storage.users.size > 0) return;
    open.delete(key);
    await storage.writer.close();
    // The last connection's clean close checkpoints the WAL into the database and removes it:
    // a WAL found at the next start means this did not happen (inspect-wal.ts).
    storage.closeDatabase();
  };
  return { ...storage, release };
}

/** The event store half of the sqlite driver. */
export const sqliteStore: StoreFactory<SqliteStorageOptions> = async (options) => {
  const storage = await acquire(options, "store");
  return createSqliteStoreDriver({
    db: storage.db,
    writer: storage.writer,
    now: storage.options.now,
    summarizeEvent: createEventSummarizer(options.services),
    purgeBatchSize: storage.options.purgeBatchSize,
    checkpoint: () => storage.writer.checkpoint(),
    release: storage.release,
  });
};

/** The outbox half of the sqlite driver. */
export const sqliteOutbox: OutboxFactory<SqliteStorageOptions> = async (options) => {
  const storage = await acquire(options, "outbox");
  return createSqliteOutboxDriver({
    db: storage.db,
    writer: storage.writer,
    purgeBatchSize: storage.options.purgeBatchSize,
    release: storage.release,
  });
};

/** Opens both halves on one database. */
export async function openSqliteStorage(options: SqliteStorageOptions): Promise<SqliteStorage> {
  const store = await sqliteStore(options);
  try {
    return { store, outbox: await sqliteOutbox(options) };
  } catch (error) {
    await store.close();
    throw error;
  }
}
