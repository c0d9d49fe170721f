/**
 * Group commit for the SQLite store: every write (event appends, dedupe marks, shared values,
 * outbox changes, retention batches) is a list of statements queued here. While the writer
 * thread (sqlite-writer-thread.js) commits and syncs one group, the next one gathers; when it
 * answers, everything queued goes over as one message and runs in ONE transaction followed by
 * one WAL sync. So N concurrent webhooks cost one fsync and one message instead of N, and the
 * event loop spends no CPU on SQLite's write path (B-tree and index updates, the WAL, the sync,
 * checkpoints).
 *
 * Durability (docs/storage.md#the-sqlite-store): a write's promise resolves only once the writer
 * thread reports
 * its transaction committed and the WAL synced, which is the contract's durability rule
 * (src/store/contract.ts) and what the ingress waits for before its 202.
 *
 * Writes run in call order, within and across transactions. One exception keeps the result the
 * same: a statement that overwrites a whole row (`RunOptions`) drops an earlier overwrite of that
 * row still waiting in the same group, as if both ran in the transaction (a delivery's
 * "delivering" and its outcome, when the answer came before the group left: one row write).
 *
 * A transaction that fails (disk
 * full, I/O error, a constraint) is rolled back whole and every write in it rejects with
 * `StoreUnavailableError`; the caller answers 503 and the upstream retries.
 */
import { Worker } from "node:worker_threads";
import { StoreUnavailableError } from "../../../src/store/contract.ts";

/** One statement and its parameters, run by the writer thread. */
export type WriteStatement = [sql: string, params: unknown[]];

/** How the statements of one write touch rows, so that a later overwrite can replace an earlier one. */
export interface RunOptions {
  /** The row (any stable name) each statement writes; undefined for statements that name none. */
  rows: readonly (string | undefined)[];
  /**
   * True when each named statement replaces its whole row whatever was there (an upsert of every
   * column): it then drops an earlier overwrite of the row still queued. False when a named
   * statement depends on the row (an insert that does nothing when it exists): an earlier
   * overwrite then stays.
   */
  overwrites: boolean;
}

interface QueuedWrite {
  statements: WriteStatement[];
  /** Positions of statements replaced by a later overwrite of their row (not sent). */
  dropped?: boolean[];
  onDurable?(changes: number[]): void;
  resolve(changes: number[]): void;
  reject(error: unknown): void;
}

type WriterMessage =
  | { ready: true }
  | { closed: true }
  | { checkpointed: true; error?: string }
  | { ids: number[]; results: number[][][] }
  | { ids: number[]; error: string; syncFailed?: boolean };

export interface GroupCommit {
  /**
   * Queues `statements` for the next transaction. Resolves with the number of rows each one
   * changed once the transaction is durable, right after `onDurable` ran (in queue order, in the
   * same tick as the other writes made durable by the same sync). A statement a later overwrite
   * replaced (`RunOptions`) was not run and counts 0.
   */
  run(statements: WriteStatement[], onDurable?: (changes: number[]) => void, options?: RunOptions): Promise<number[]>;
  /** False once a WAL sync failed: durability of later commits is unknown (ping reports it). */
  readonly healthy: boolean;
  /** Transactions committed so far (tests and benchmarks read how writes were grouped). */
  readonly transactions: number;
  /**
   * Copies the WAL into the database and cuts it to zero bytes, on the writer thread, after the
   * writes already sent (erasure: no old page stays in the WAL).
   */
  checkpoint(): Promise<void>;
  /** Commits and syncs what is queued, then stops the writer thread; later `run` calls reject. */
  close(): Promise<void>;
}

export interface GroupCommitOptions {
  /** The database file (opened, with its schema, by open-database.ts). */
  path: string;
  /** Who syncs: the writer after each commit (`wal-fdatasync`) or SQLite inside it (`full`). */
  durability: "wal-fdatasync" | "full";
  /** The writer connection's page cache in KiB. */
  cacheKiB: number;
  /** A WAL grown by a burst is cut back to this many bytes after the next checkpoint. */
  walSizeLimit: number;
}

const WRITER = new URL("./sqlite-writer-thread.js", import.meta.url);

/**
 * This process's CPU-profiler flags (`--cpu-prof`, `--cpu-prof-dir <dir>`, ...): a gateway started
 * with them (the benchmarks' `BENCH_CPU_PROF`) writes its writer thread's profile too.
 */
function profilerFlags(argv: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    if (!flag.startsWith("--cpu-prof")) continue;
    flags.push(flag);
    const takesValue = flag !== "--cpu-prof" && !flag.includes("=");
    if (takesValue && i + 1 < argv.length) flags.push(argv[++i] as string);
  }
  return flags;
}

/** Starts the writer thread of the database at `options.path`; resolves once it is ready. */
export async function createGroupCommit(options: GroupCommitOptions): Promise<GroupCommit> {
  // Plain JavaScript: no loader flags of this process (tsx) are needed, and they cost the start.
  const worker = new Worker(WRITER, { workerData: options, execArgv: profilerFlags(process.execArgv) });
  let queue: QueuedWrite[] = [];
  /** The last overwrite of each named row among the queued writes. */
  let overwrites = new Map<string, { write: QueuedWrite; index: number }>();
  /** The group the writer is committing (at most one), or undefined when it is free. */
  let inFlight: QueuedWrite[] | undefined;
  let nextId = 1;
  let scheduled: NodeJS.Immediate | undefined;
  let closed = false;
  let healthy = true;
  let transactions = 0;
  let failure: Error | undefined;
  /** Called when nothing is queued or in flight any more (close waits for it). */
  let onIdle: (() => void) | undefined;
  let onClosed: (() => void) | undefined;
  /** Checkpoints asked for, answered in order. */
  const checkpoints: { resolve(): void; reject(error: Error): void }[] = [];
  /** SQL texts already sent to the writer, by the number that names them in later messages. */
  const known = new Map<string, number>();

  const flush = () => {
    scheduled = undefined;
    // One group at a time: the rest gathers until the writer answers (`answered`).
    if (queue.length === 0 || inFlight || failure) return;
    const writes = queue;
    queue = [];
    overwrites = new Map();
    inFlight = writes;
    // Each SQL text crosses to the thread once; afterwards only its number and the parameters.
    const defs: [number, string][] = [];
    const numbered = writes.map(({ statements, dropped }) =>
      (dropped ? statements.filter((_, i) => !dropped[i]) : statements).map(([sql, params]) => {
        let n = known.get(sql);
        if (n === undefined) {
          n = known.size;
          known.set(sql, n);
          defs.push([n, sql]);
        }
        return [n, params];
      }),
    );
    worker.ref();
    worker.postMessage({ id: nextId++, defs, writes: numbered });
  };

  /** Takes the answered group and sends what gathered meanwhile; the thread no longer holds the process when idle. */
  const answered = (): QueuedWrite[] => {
    const writes = inFlight ?? [];
    inFlight = undefined;
    flush();
    if (!inFlight) {
      if (checkpoints.length === 0) worker.unref();
      onIdle?.();
    }
    return writes;
  };

  const fail = (error: Error) => {
    failure = error;
    healthy = false;
    for (const waiting of checkpoints.splice(0)) waiting.reject(error);
    for (const write of [...(inFlight ?? []), ...queue]) write.reject(error);
    inFlight = undefined;
    queue = [];
    overwrites = new Map();
    onIdle?.();
    onClosed?.();
  };

  /** The changes of `write`, one per statement it was given: a dropped statement changed 0 rows. */
  const aligned = ({ statements, dropped }: QueuedWrite, changes: number[]): number[] => {
    if (!dropped) return changes;
    let next = 0;
    return statements.map((_, i) => (dropped[i] ? 0 : (changes[next++] ?? 0)));
  };

  /** Drops the queued overwrites `write` replaces; remembers its own. */
  const nameRows = (write: QueuedWrite, { rows, overwrites: overwriting }: RunOptions) => {
    rows.forEach((row, index) => {
      if (row === undefined) return;
      if (!overwriting) {
        overwrites.delete(row);
        return;
      }
      const earlier = overwrites.get(row);
      if (earlier) {
        earlier.write.dropped ??= [];
        earlier.write.dropped[earlier.index] = true;
      }
      overwrites.set(row, { write, index });
    });
  };

  await new Promise<void>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", () => {
      worker.off("error", reject);
      resolve();
    });
  });
  // From here the thread keeps the process alive only while it holds writes (`flush`, `answered`).
  worker.unref();
  worker.on("message", (message: WriterMessage) => {
    if ("closed" in message) return onClosed?.();
    if ("checkpointed" in message) {
      const waiting = checkpoints.shift();
      if (message.error) waiting?.reject(new StoreUnavailableError(`checkpoint failed: ${message.error}`));
      else waiting?.resolve();
      if (checkpoints.length === 0 && !inFlight) worker.unref();
      return;
    }
    if (!("ids" in message)) return;
    const writes = answered();
    if ("error" in message) {
      if (message.syncFailed) healthy = false;
      const what = message.syncFailed ? "store sync failed" : "store write failed";
      const error = new StoreUnavailableError(`${what}: ${message.error}`);
      for (const write of writes) write.reject(error);
      return;
    }
    transactions++;
    const results = message.results[0] ?? [];
    writes.forEach((write, i) => {
      const changes = aligned(write, results[i] ?? []);
      try {
        write.onDurable?.(changes);
        write.resolve(changes);
      } catch (error) {
        write.reject(error);
      }
    });
  });
  worker.on("error", (error) => {
    fail(new StoreUnavailableError(`the sqlite writer thread failed: ${error.message}`, { cause: error }));
  });
  worker.on("exit", () => {
    if (!failure) fail(new StoreUnavailableError("the sqlite writer thread stopped"));
  });

  return {
    run(statements, onDurable, options) {
      if (closed) return Promise.reject(new StoreUnavailableError("the store is closed"));
      if (failure) return Promise.reject(failure);
      return new Promise<number[]>((resolve, reject) => {
        const write: QueuedWrite = { statements, onDurable, resolve, reject };
        if (options) nameRows(write, options);
        queue.push(write);
        // After the poll phase: every request read in this turn of the loop joins the group.
        scheduled ??= setImmediate(flush);
      });
    },
    get healthy() {
      return healthy;
    },
    get transactions() {
      return transactions;
    },
    checkpoint() {
      if (closed || failure) return Promise.reject(failure ?? new StoreUnavailableError("the store is closed"));
      return new Promise<void>((resolve, reject) => {
        checkpoints.push({ resolve, reject });
        worker.ref();
        worker.postMessage({ checkpoint: true });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (scheduled) clearImmediate(scheduled);
      flush();
      if (inFlight) await new Promise<void>((resolve) => (onIdle = resolve));
      if (failure) return;
      const done = new Promise<void>((resolve) => {
        onClosed = resolve;
      });
      worker.ref();
      worker.postMessage({ close: true });
      await done;
      await worker.terminate();
    },
  };
}
