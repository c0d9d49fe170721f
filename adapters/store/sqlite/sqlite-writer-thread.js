// @ts-check
/**
 * The sqlite store's writer thread (started by group-commit.ts): the only connection that writes
 * the database. Each message is one group of writes from the event loop; every group waiting
 * when the thread comes round runs in ONE transaction, then the WAL is synced, then the thread
 * answers. Index maintenance, JSON columns, the WAL sync and the automatic checkpoint all cost
 * this thread's CPU, not the event loop's. Plain JavaScript: a worker thread does not inherit
 * the tsx loader the gateway runs under.
 *
 * Durability: `wal-fdatasync` runs SQLite with `synchronous=NORMAL` and fdatasyncs the WAL after
 * each commit before answering; `full` lets SQLite sync inside the commit. Either way nothing is
 * answered before it is on disk (docs/storage.md#the-sqlite-store).
 */
import { closeSync, fdatasyncSync, openSync } from "node:fs";
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

/** @typedef {[sql: number, params: unknown[]]} Statement */
/** @typedef {{ id: number, defs: [number, string][], writes: Statement[][] }} Group */

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
const { path, cacheKiB, durability, walSizeLimit } =
  /** @type {{ path: string, cacheKiB: number, durability: "wal-fdatasync" | "full", walSizeLimit: number }} */ (
    workerData
  );

const db = new Database(path, { timeout: 10_000 });

/**
 * Every statement of this thread is prepared once and kept until the thread ends, pragmas too
 * (`db.pragma()` would prepare a new one per call): on Node 24 a garbage-collected better-sqlite3
 * statement can abort the process (`Assertion failed: (env) != nullptr` from
 * `Statement::~Statement()`, see retained-statements.ts). At the thread's end Node's cleanup hooks
 * free them with the environment still current.
 * @type {Map<string, import("better-sqlite3").Statement>}
 */
const kept = new Map();
/** @param {string} sql */
const keep = (sql) => {
  let statement = kept.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    kept.set(sql, statement);
  }
  return statement;
};
/** @param {string} source */
const pragma = (source) => {
  const statement = keep(`PRAGMA ${source}`);
  if (statement.reader) return statement.all();
  statement.run();
  return [];
};

pragma("journal_mode = WAL");
pragma(durability === "full" ? "synchronous = FULL" : "synchronous = NORMAL");
pragma(`cache_size = -${cacheKiB}`);
pragma("mmap_size = 0");
pragma("temp_store = MEMORY");
// This connection deletes and replaces rows: their old content is zeroed in the file, so an
// erased event body leaves no bytes behind (docs/data-lifecycle.md).
pragma("secure_delete = ON");
pragma(`journal_size_limit = ${walSizeLimit}`);
// The WAL exists from the open connection's first write until the last connection closes, and
// a checkpoint truncates it in place, so this descriptor always names the live WAL.
const wal = durability === "wal-fdatasync" ? openSync(`${path}-wal`, "r+") : undefined;
if (wal !== undefined) fdatasyncSync(wal);

/** SQL texts by the number the event loop gave them (each sent once, in `defs`). */
/** @type {string[]} */
const texts = [];
/** @param {number} n */
const prepared = (n) => keep(/** @type {string} */ (texts[n]));

/** @param {Group[]} groups */
const runAll = (groups) =>
  groups.map((group) => group.writes.map((write) => write.map(([n, params]) => prepared(n).run(params).changes)));
const transaction = db.transaction(runAll);

/** @param {Group[]} groups */
function commit(groups) {
  const ids = groups.map((group) => group.id);
  /** @type {number[][][]} */
  let results;
  try {
    results = transaction.immediate(groups);
  } catch (cause) {
    if (db.inTransaction) {
      try {
        db.exec("ROLLBACK");
      } catch {}
    }
    port.postMessage({ ids, error: /** @type {Error} */ (cause).message });
    return;
  }
  if (wal !== undefined) {
    try {
      fdatasyncSync(wal);
    } catch (cause) {
      port.postMessage({ ids, error: /** @type {Error} */ (cause).message, syncFailed: true });
      return;
    }
  }
  port.postMessage({ ids, results });
}

/**
 * Copies the WAL into the database and cuts it to zero bytes, retrying while a reader of the
 * event loop's connection holds an older snapshot (a few milliseconds at most).
 */
function checkpoint() {
  for (let attempt = 0; attempt < 100; attempt++) {
    const [result] = /** @type {{ busy: number }[]} */ (pragma("wal_checkpoint(TRUNCATE)"));
    if (!result || result.busy === 0) return;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
  }
}

/** @typedef {Group | { close: true } | { checkpoint: true }} Message */
port.on("message", (/** @type {Message} */ first) => {
  /** @type {Group[]} */
  const groups = [];
  let closing = false;
  let checkpoints = 0;
  /** @param {Message} message */
  const take = (message) => {
    if ("close" in message) closing = true;
    else if ("checkpoint" in message) checkpoints++;
    else {
      // Kept even when this group fails: later groups name these texts by number only.
      for (const [n, sql] of message.defs) texts[n] = sql;
      groups.push(message);
    }
  };
  take(first);
  // Everything the event loop sent while the last commit and sync ran joins this transaction.
  for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) take(next.message);
  if (groups.length > 0) commit(groups);
  for (; checkpoints > 0; checkpoints--) {
    try {
      checkpoint();
      port.postMessage({ checkpointed: true });
    } catch (cause) {
      port.postMessage({ checkpointed: true, error: /** @type {Error} */ (cause).message });
    }
  }
  if (closing) {
    if (wal !== undefined) closeSync(wal);
    db.close();
    port.postMessage({ closed: true });
    port.close();
  }
});
port.postMessage({ ready: true });
