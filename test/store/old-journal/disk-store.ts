/**
 * The previous embedded store, frozen as a test fixture: an append-only journal on local disk
 * with group commit. No longer a driver (`disk` is now an alias of the sqlite store,
 * adapters/store/registry.ts). The journal's recovery, line format and lock are the reader of
 * the upgrade import (adapters/store/sqlite/journal-import/); this writer is kept here so the
 * import is tested against journals written by the old code itself (test/store/sqlite-import.test.ts).
 *
 * Why a journal and not one file per key (unstorage's fs driver): an acknowledged webhook must
 * survive `kill -9` and power loss, so every append is fdatasync'ed before it resolves. One
 * fsync per event caps throughput at the disk's sync rate; a journal lets every append that
 * arrives while a sync is running share the next one (group commit, journal-writer.ts).
 * Recovery replays the file into an in-memory index and cuts off a torn last batch
 * (recover-journal.ts). Memory holds a small summary per event plus the dedupe marks and the
 * small shared values; records are read back by offset.
 *
 * Retention appends a `purge` line and drops events from the index at once; the file is
 * rewritten (compact-journal.ts) only once enough of it is dead, so its cost stays proportional
 * to what was written, not to the size of the journal at every maintenance run.
 * One process owns a journal at a time (journal-lock.ts).
 */
import { constants } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { parseLine } from "../../../adapters/store/sqlite/journal-import/journal-line.ts";
import { acquireJournalLock } from "../../../adapters/store/sqlite/journal-import/journal-lock.ts";
import { recoverJournal } from "../../../adapters/store/sqlite/journal-import/recover-journal.ts";
import type { AppendResult, ClaimResult, EventRecord, StoreDriver } from "../../../src/store/contract.ts";

/**
 * The journal-era driver, kept only to write old-format journals for the import tests: it
 * predates per-type retention and erasure, so it lacks those two members.
 */
export type LegacyDiskStore = Omit<StoreDriver, "removeEvents" | "redactEvents">;

import { StoreUnavailableError } from "../../../src/store/contract.ts";
import { pageSummaries, summariesAfter } from "../../../src/store/match-event-query.ts";
import { compactJournal, syncDirectory } from "./compact-journal.ts";
import { createJournalIndex, type IndexEntry } from "./journal-index.ts";
import { createJournalWriter, type JournalWriter } from "./journal-writer.ts";

export interface DiskStoreOptions {
  /** Directory of the journal; created when missing. */
  dir: string;
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Records kept in memory for fast reads of recent events. Default 2048. */
  cacheSize?: number;
  /** A purge compacts the journal once at least this many bytes are dead. Default 16 MiB. */
  compactMinDeadBytes?: number;
  /** ...and at least this share of the file is dead. Default 0.5. */
  compactMinDeadRatio?: number;
}

const JOURNAL = "journal.log";

/** The disk store driver: opens (and recovers) the journal in `options.dir`. */
export const diskStore = async (options: DiskStoreOptions): Promise<LegacyDiskStore> => {
  const { dir } = options;
  const now = options.now ?? Date.now;
  const path = join(dir, JOURNAL);
  await mkdir(dir, { recursive: true });
  const releaseLock = await acquireJournalLock(dir);
  const index = createJournalIndex();
  let writer: JournalWriter;
  try {
    const handle = await open(path, constants.O_RDWR | constants.O_CREAT);
    try {
      const size = await recoverJournal(handle, path, index.replay);
      // The journal's directory entry must be durable before the first acknowledgement.
      await syncDirectory(dir);
      writer = createJournalWriter(handle, size);
    } catch (error) {
      await handle.close();
      throw error;
    }
    index.finishRecovery(now());
  } catch (error) {
    await releaseLock();
    throw error;
  }
  return createDiskDriver({ ...options, now, path }, index, writer, releaseLock);
};

function createDiskDriver(
  options: DiskStoreOptions & { now: () => number; path: string },
  index: ReturnType<typeof createJournalIndex>,
  writer: JournalWriter,
  releaseLock: () => Promise<void>,
): LegacyDiskStore {
  const { now, path, dir } = options;
  const cacheSize = options.cacheSize ?? 2048;
  const minDeadBytes = options.compactMinDeadBytes ?? 16 * 1024 * 1024;
  const minDeadRatio = options.compactMinDeadRatio ?? 0.5;
  const cache = new Map<string, EventRecord>();
  const inflight = new Map<string, Promise<AppendResult>>();
  /** Purges run one at a time; close waits for the running one. */
  let purging: Promise<unknown> = Promise.resolve();
  let closing: Promise<void> | undefined;

  const ensureOpen = () => {
    if (closing) throw new StoreUnavailableError("disk store is closed");
  };

  const remember = (record: EventRecord) => {
    if (cacheSize === 0) return;
    cache.set(record.id, record);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
  };

  const readRecord = async (entry: IndexEntry): Promise<EventRecord> => {
    const cached = cache.get(entry.id);
    if (cached) return cached;
    // Handle and offset are taken in one tick: compaction swaps both in one tick too.
    const buffer = Buffer.allocUnsafe(entry.length);
    const { bytesRead } = await writer.handle.read(buffer, 0, entry.length, entry.offset);
    const parsed = bytesRead === entry.length ? parseLine(buffer, 0, entry.length - 1) : undefined;
    if (!parsed || !("e" in parsed.line) || parsed.line.e.id !== entry.id) {
      throw new StoreUnavailableError(`journal record ${entry.id} at byte ${entry.offset} is unreadable`);
    }
    return parsed.line.e;
  };

  const liveValue = (key: string) => {
    const item = index.kv.get(key);
    if (item && item.expiresAt <= now()) {
      index.kv.delete(key);
      return undefined;
    }
    return item;
  };

  const compactIfWorthIt = async () => {
    const dead = writer.size - index.liveBytes();
    if (dead <= 0 || dead < minDeadBytes || dead < minDeadRatio * writer.size) return;
    const plan = index.planCompaction(now(), writer.size);
    await compactJournal(writer, path, dir, plan, (relocation) => index.relocate(plan, relocation));
  };

  const purgeNow = async (before: number): Promise<number> => {
    index.dropExpired(now());
    let removed = 0;
    if (index.entries.some((e) => e.receivedAt < before)) {
      // Dropped from the index only once the retention line is durable, in the same tick.
      await writer.append(JSON.stringify({ purge: before }), () => {
        const gone = index.purgeBefore(before);
        for (const entry of gone) cache.delete(entry.id);
        removed = gone.length;
      });
    }
    await compactIfWorthIt();
    return removed;
  };

  const writeValue = (json: string) => writer.append(json, () => {});

  return {
    name: "disk",
    async claim(key, ttlMs): Promise<ClaimResult> {
      ensureOpen();
      const t = now();
      const mark = index.marks.get(key);
      if (mark && mark.expiresAt > t) {
        return mark.id ? { status: "duplicate", id: mark.id } : { status: "in_progress" };
      }
      index.marks.set(key, { expiresAt: t + ttlMs });
      return { status: "claimed" };
    },
    append(record, key, dedupeTtlMs) {
      if (closing) return Promise.reject(new StoreUnavailableError("disk store is closed"));
      const expiresAt = now() + dedupeTtlMs;
      const existing = index.byId.get(record.id);
      if (existing) {
        index.marks.set(key, { id: record.id, expiresAt });
        return Promise.resolve({ inserted: false, seq: existing.seq });
      }
      const running = inflight.get(record.id);
      if (running) return running.then((r) => ({ inserted: false, seq: r.seq }));
      const stored: EventRecord = { ...record, seq: index.nextSeq() };
      const json = JSON.stringify({ e: stored, k: key, x: expiresAt });
      const promise = writer
        .append(json, (offset, length) => {
          index.addEvent(stored, key, expiresAt, offset, length);
          remember(stored);
        })
        .then(
          (): AppendResult => ({ inserted: true, seq: stored.seq }),
          (error: unknown) => {
            throw error instanceof StoreUnavailableError
              ? error
              : new StoreUnavailableError(`journal append failed: ${String(error)}`, { cause: error });
          },
        )
        .finally(() => inflight.delete(record.id));
      inflight.set(record.id, promise);
      return promise;
    },
    async release(key) {
      if (!index.marks.get(key)?.id) index.marks.delete(key);
    },
    async get(id) {
      ensureOpen();
      const entry = index.byId.get(id);
      return entry ? readRecord(entry) : undefined;
    },
    async list(query) {
      ensureOpen();
      const { page, next } = pageSummaries(index.entries, query);
      return { events: await Promise.all(page.map(readRecord)), next };
    },
    async readAfter(afterSeq, limit, filter) {
      ensureOpen();
      return Promise.all(summariesAfter(index.entries, afterSeq, limit, filter).map(readRecord));
    },
    async lastSeq() {
      // Only durable events count: the index holds what the journal has fdatasync'ed.
      return index.lastSeq();
    },
    purge(before) {
      if (closing) return Promise.reject(new StoreUnavailableError("disk store is closed"));
      const run = purging.then(() => purgeNow(before));
      purging = run.catch(() => {});
      return run;
    },
    async ping() {
      ensureOpen();
      if (!writer.healthy) throw new StoreUnavailableError("the journal could not be repaired after a failed write");
      await writer.handle.stat();
    },
    async kvGet(key) {
      return liveValue(key)?.value;
    },
    async kvSet(key, value, ttlMs) {
      ensureOpen();
      const item = { value, expiresAt: now() + ttlMs };
      index.kv.set(key, item);
      await writeValue(JSON.stringify({ kv: key, v: value, x: item.expiresAt }));
    },
    async kvSetIfAbsent(key, value, ttlMs) {
      ensureOpen();
      if (liveValue(key)) return false;
      // Taken in memory at once (that is the lock); given back if it cannot be made durable.
      const item = { value, expiresAt: now() + ttlMs };
      index.kv.set(key, item);
      try {
        await writeValue(JSON.stringify({ kv: key, v: value, x: item.expiresAt }));
      } catch (error) {
        if (index.kv.get(key) === item) index.kv.delete(key);
        throw error;
      }
      return true;
    },
    async kvDelete(key) {
      ensureOpen();
      // An absent or expired value needs no line: recovery drops expired values anyway.
      if (!liveValue(key)) return;
      index.kv.delete(key);
      await writeValue(JSON.stringify({ kvdel: key }));
    },
    close() {
      closing ??= (async () => {
        await purging;
        await writer.close();
        await releaseLock();
      })();
      return closing;
    },
  };
}
