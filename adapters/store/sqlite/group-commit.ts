/**
 * Group commit for the SQLite store: every write (event appends, dedupe marks, shared values,
 * outbox changes, retention batches) is queued, and everything queued by the time the event
 * loop comes round runs in ONE transaction, so N concurrent webhooks cost one WAL fsync instead
 * of N. With `synchronous=FULL` in WAL mode (open-database.ts) the commit returns only after
 * the WAL was fsync'ed: a write's promise resolves only then, which is the contract's
 * durability rule (src/store/contract.ts) and what the ingress waits for before its 202.
 *
 * Writes run in call order, within and across batches. A batch that fails (disk full, I/O
 * error) is rolled back whole and every write in it rejects with `StoreUnavailableError`; the
 * caller answers 503 and the upstream retries.
 */
import type { Database } from "better-sqlite3";
import { StoreUnavailableError } from "../../../src/store/contract.ts";

interface QueuedWrite {
  work(): unknown;
  onCommitted?(result: unknown): void;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface GroupCommit {
  /**
   * Queues `work` (synchronous statements) for the next transaction. Resolves with its result
   * once the transaction is durable, after `onCommitted` ran (in queue order, in the same tick
   * as the commit, so in-memory state never runs ahead of or behind the database).
   */
  run<T>(work: () => T, onCommitted?: (result: T) => void): Promise<T>;
  /** Writes still queued or running. */
  readonly pending: number;
  /** Commits what is queued; later `run` calls reject. */
  close(): Promise<void>;
}

/** Creates the single writer of `db`. */
export function createGroupCommit(db: Database): GroupCommit {
  let queue: QueuedWrite[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  let closed = false;

  const commit = (batch: QueuedWrite[]) => {
    const results: unknown[] = [];
    try {
      db.transaction(() => {
        for (const write of batch) results.push(write.work());
      }).immediate();
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
      return;
    }
    for (const [i, write] of batch.entries()) {
      try {
        write.onCommitted?.(results[i]);
        write.resolve(results[i]);
      } catch (error) {
        write.reject(error);
      }
    }
  };

  const flush = () => {
    scheduled = undefined;
    const batch = queue;
    queue = [];
    if (batch.length > 0) commit(batch);
  };

  return {
    run<T>(work: () => T, onCommitted?: (result: T) => void): Promise<T> {
      if (closed) return Promise.reject(new StoreUnavailableError("the store is closed"));
      return new Promise<T>((resolve, reject) => {
        queue.push({
          work,
          onCommitted: onCommitted as QueuedWrite["onCommitted"],
          resolve: resolve as QueuedWrite["resolve"],
          reject,
        });
        // After the poll phase: every request read in this turn of the loop joins the batch.
        scheduled ??= setImmediate(flush);
      });
    },
    get pending() {
      return queue.length;
    },
    async close() {
      closed = true;
      if (scheduled) {
        clearImmediate(scheduled);
        // Synchronous: when it returns, every write queued before close is committed or rejected.
        flush();
      }
    },
  };
}
