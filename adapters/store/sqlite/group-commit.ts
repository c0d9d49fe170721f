/**
 * Group commit for the SQLite store: every write (event appends, dedupe marks, shared values,
 * outbox changes, retention batches) is queued, and everything queued by the time the event
 * loop comes round runs in ONE transaction; transactions committed while a WAL sync is running
 * share the next sync. So N concurrent webhooks cost one fsync instead of N, and the event loop
 * keeps reading requests while the disk syncs.
 *
 * Durability (README "Storage"): in the default mode SQLite runs with `synchronous=NORMAL` (its
 * commit writes the WAL without syncing it) and this writer fdatasyncs the WAL file itself,
 * asynchronously, after the commit; a write's promise resolves only once that sync returned,
 * which is the contract's durability rule (src/store/contract.ts) and what the ingress waits for
 * before its 202. The WAL is a log: a sync that returns makes every commit before it durable,
 * and SQLite itself syncs the WAL before a checkpoint copies it and the database after, so a
 * WAL reused after a checkpoint never held anything not yet in the synced database. In `full`
 * mode SQLite syncs inside each commit instead (`synchronous=FULL`), blocking the event loop.
 *
 * Writes run in call order, within and across batches. A batch that fails (disk full, I/O
 * error) is rolled back whole and every write in it rejects with `StoreUnavailableError`; the
 * caller answers 503 and the upstream retries.
 */
import type { Database } from "better-sqlite3";
import { StoreUnavailableError } from "../../../src/store/contract.ts";

interface QueuedWrite {
  work(): unknown;
  onDurable?(result: unknown): void;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  result?: unknown;
}

export interface GroupCommit {
  /**
   * Queues `work` (synchronous statements) for the next transaction. Resolves with its result
   * once the transaction is durable, right after `onDurable` ran (in queue order, in the same
   * tick as the other writes made durable by the same sync).
   */
  run<T>(work: () => T, onDurable?: (result: T) => void): Promise<T>;
  /** False once a WAL sync failed: durability of later commits is unknown (ping reports it). */
  readonly healthy: boolean;
  /** Commits and syncs what is queued; later `run` calls reject. */
  close(): Promise<void>;
}

/**
 * Creates the single writer of `db`. `syncWal` fdatasyncs the WAL (default mode); without it,
 * SQLite's own `synchronous=FULL` is relied on and writes resolve right after the commit.
 */
export function createGroupCommit(db: Database, syncWal?: () => Promise<void>): GroupCommit {
  let queue: QueuedWrite[] = [];
  /** Committed, waiting for the next WAL sync. */
  let committed: QueuedWrite[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  let syncing: Promise<void> | undefined;
  let closed = false;
  let healthy = true;

  const settle = (writes: QueuedWrite[]) => {
    for (const write of writes) {
      try {
        write.onDurable?.(write.result);
        write.resolve(write.result);
      } catch (error) {
        write.reject(error);
      }
    }
  };

  const commit = (batch: QueuedWrite[]): boolean => {
    try {
      db.transaction(() => {
        for (const write of batch) write.result = write.work();
      }).immediate();
      return true;
    } catch (cause) {
      // better-sqlite3 rolls back a failed transaction; make sure no half-state is left open.
      if (db.inTransaction) {
        try {
          db.exec("ROLLBACK");
        } catch {}
      }
      const error =
        cause instanceof StoreUnavailableError
          ? cause
          : new StoreUnavailableError(`store write failed: ${(cause as Error).message}`, { cause });
      for (const write of batch) write.reject(error);
      return false;
    }
  };

  /** Syncs the WAL until nothing committed waits; one sync at a time. */
  const syncLoop = async (sync: () => Promise<void>) => {
    while (committed.length > 0) {
      const writes = committed;
      committed = [];
      try {
        await sync();
      } catch (cause) {
        healthy = false;
        const error = new StoreUnavailableError(`store sync failed: ${(cause as Error).message}`, { cause });
        for (const write of writes) write.reject(error);
        continue;
      }
      settle(writes);
    }
    syncing = undefined;
  };

  const flush = () => {
    scheduled = undefined;
    const batch = queue;
    queue = [];
    if (batch.length === 0 || !commit(batch)) return;
    if (!syncWal) return settle(batch);
    committed.push(...batch);
    syncing ??= syncLoop(syncWal);
  };

  return {
    run<T>(work: () => T, onDurable?: (result: T) => void): Promise<T> {
      if (closed) return Promise.reject(new StoreUnavailableError("the store is closed"));
      return new Promise<T>((resolve, reject) => {
        queue.push({
          work,
          onDurable: onDurable as QueuedWrite["onDurable"],
          resolve: resolve as QueuedWrite["resolve"],
          reject,
        });
        // After the poll phase: every request read in this turn of the loop joins the batch.
        scheduled ??= setImmediate(flush);
      });
    },
    get healthy() {
      return healthy;
    },
    async close() {
      closed = true;
      if (scheduled) {
        clearImmediate(scheduled);
        flush();
      }
      while (syncing) await syncing;
    },
  };
}
