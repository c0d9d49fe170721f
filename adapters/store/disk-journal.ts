/**
 * The embedded default store: an append-only journal on local disk with group commit.
 *
 * Why a journal and not one file per key (unstorage's fs driver): an acknowledged webhook must
 * survive `kill -9` and power loss, so every append is fdatasync'ed before it resolves. One
 * fsync per event caps throughput at the disk's sync rate; a journal lets every append that
 * arrives while a sync is running share the next one (group commit), so 100 concurrent
 * deliveries cost one write and one fdatasync. Recovery is a sequential read that rebuilds the
 * in-memory index; a torn last line (crash mid-write) is cut off, because its writer was never
 * acknowledged.
 *
 * Memory holds only a small summary per event plus the dedupe marks; records are read back from
 * the file by offset. Retention rewrites the journal (compaction) atomically: temp file, fsync,
 * rename, fsync of the directory. One process owns a journal at a time (a lock file with its pid).
 *
 * Small shared values (token cache, locks) live in memory and are written through to
 * unstorage's fs driver under `<dir>/kv`, so they survive a restart.
 */

import type { FileHandle } from "node:fs/promises";
import { mkdir, open, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createStorage, type Storage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import type {
  AppendResult,
  ClaimResult,
  EventQuery,
  EventRecord,
  StoreDriver,
  StoreFactory,
} from "../../src/store/contract.ts";
import { StoreUnavailableError } from "../../src/store/contract.ts";
import { type EventSummary, pageSummaries, summariesAfter, summarizeEvent } from "../../src/store/match-event-query.ts";

export interface DiskStoreOptions {
  /** Directory of the journal; created when missing. */
  dir: string;
  /** Clock for TTLs, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Records kept in memory for fast reads of recent events. Default 2048. */
  cacheSize?: number;
}

interface Entry extends EventSummary {
  offset: number;
  length: number;
}

interface Mark {
  id?: string;
  expiresAt: number;
}

/** One line of the journal. */
type JournalLine = { e: EventRecord; k: string; x: number } | { m: string; i: string; x: number };

interface Pending {
  line: Buffer;
  record: EventRecord;
  key: string;
  expiresAt: number;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

const JOURNAL = "journal.log";
const LOCK = "LOCK";

export const diskStore: StoreFactory<DiskStoreOptions> = (options) => openDiskStore(options);

/** Opens (and recovers) the journal in `options.dir`. */
export async function openDiskStore(options: DiskStoreOptions): Promise<StoreDriver> {
  const now = options.now ?? Date.now;
  const cacheSize = options.cacheSize ?? 2048;
  const dir = options.dir;
  await mkdir(dir, { recursive: true });
  await acquireLock(dir);
  const journalPath = join(dir, JOURNAL);

  const entries: Entry[] = [];
  const byId = new Map<string, Entry>();
  const marks = new Map<string, Mark>();
  const cache = new Map<string, EventRecord>();
  const inflight = new Map<string, Promise<AppendResult>>();
  let lastSeq = 0;

  let handle: FileHandle = await open(journalPath, "a+");
  await handle.close();
  handle = await open(journalPath, "r+");
  let size = await recover(handle, (line, offset, length) => {
    if ("e" in line) {
      const entry: Entry = { ...summarizeEvent(line.e), offset, length };
      if (!byId.has(entry.id)) {
        entries.push(entry);
        byId.set(entry.id, entry);
      }
      lastSeq = Math.max(lastSeq, entry.seq);
      marks.set(line.k, { id: line.e.id, expiresAt: line.x });
    } else {
      marks.set(line.m, { id: line.i, expiresAt: line.x });
    }
  });

  const kvStorage: Storage = createStorage({ driver: fsDriver({ base: join(dir, "kv") }) });
  const kv = new Map<string, { value: string; expiresAt: number }>();
  for (const key of await kvStorage.getKeys()) {
    const item = (await kvStorage.getItem(key)) as { value: string; expiresAt: number } | null;
    if (item && item.expiresAt > now()) kv.set(key, item);
  }

  let pending: Pending[] = [];
  let flushing: Promise<void> | undefined;
  /** Set while compaction rewrites the file; appends wait for it (both move the end of the file). */
  let compacting: Promise<number> | undefined;
  let closed = false;

  const remember = (record: EventRecord) => {
    cache.set(record.id, record);
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
  };

  const flush = async () => {
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      const buffer = Buffer.concat(batch.map((p) => p.line));
      try {
        while (compacting) await compacting.catch(() => {});
        let written = 0;
        while (written < buffer.length) {
          const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, size + written);
          written += bytesWritten;
        }
        // Durability point: the batch is on disk once datasync returns.
        await handle.datasync();
      } catch (cause) {
        // Cut a partially written batch off so the journal stays a sequence of whole lines.
        await handle.truncate(size).catch(() => {});
        for (const p of batch) {
          inflight.delete(p.record.id);
          p.reject(new StoreUnavailableError(`journal write failed: ${(cause as Error).message}`));
        }
        continue;
      }
      let offset = size;
      for (const p of batch) {
        const entry: Entry = { ...summarizeEvent(p.record), offset, length: p.line.length };
        offset += p.line.length;
        entries.push(entry);
        byId.set(entry.id, entry);
        marks.set(p.key, { id: p.record.id, expiresAt: p.expiresAt });
        remember(p.record);
        inflight.delete(p.record.id);
        p.resolve({ inserted: true, seq: p.record.seq });
      }
      size = offset;
    }
  };

  const readRecord = async (entry: Entry): Promise<EventRecord> => {
    const cached = cache.get(entry.id);
    if (cached) return cached;
    const buffer = Buffer.allocUnsafe(entry.length);
    await handle.read(buffer, 0, entry.length, entry.offset);
    const line = JSON.parse(buffer.toString("utf8")) as JournalLine;
    if (!("e" in line)) throw new Error(`journal index points at a non-event line (seq ${entry.seq})`);
    return line.e;
  };

  const liveKv = (key: string) => {
    const item = kv.get(key);
    if (item && item.expiresAt <= now()) {
      kv.delete(key);
      return undefined;
    }
    return item;
  };

  const compact = async (before: number): Promise<number> => {
    const t = now();
    const keep = entries.filter((e) => e.receivedAt >= before);
    const removed = entries.length - keep.length;
    for (const [key, mark] of marks) if (mark.expiresAt <= t) marks.delete(key);
    if (removed === 0) return 0;
    const keptIds = new Set(keep.map((e) => e.id));
    const tmpPath = `${journalPath}.compact`;
    const out = await open(tmpPath, "w");
    const newOffsets: number[] = [];
    let offset = 0;
    try {
      for (const entry of keep) {
        const buffer = Buffer.allocUnsafe(entry.length);
        await handle.read(buffer, 0, entry.length, entry.offset);
        await out.write(buffer, 0, buffer.length, offset);
        newOffsets.push(offset);
        offset += buffer.length;
      }
      // Dedupe marks of purged events that are still inside their window survive compaction.
      for (const [key, mark] of marks) {
        if (!mark.id || keptIds.has(mark.id)) continue;
        const line = Buffer.from(`${JSON.stringify({ m: key, i: mark.id, x: mark.expiresAt })}\n`);
        await out.write(line, 0, line.length, offset);
        offset += line.length;
      }
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(tmpPath, journalPath);
    await syncDirectory(dir);
    await handle.close();
    handle = await open(journalPath, "r+");
    size = offset;
    keep.forEach((entry, i) => {
      entry.offset = newOffsets[i] as number;
    });
    entries.length = 0;
    entries.push(...keep);
    for (const id of [...byId.keys()]) {
      if (!keptIds.has(id)) {
        byId.delete(id);
        cache.delete(id);
      }
    }
    return removed;
  };

  /** Resolves when neither a flush nor a compaction is running. */
  const idle = async () => {
    for (;;) {
      if (compacting) await compacting.catch(() => {});
      else if (flushing) await flushing;
      else return;
    }
  };

  const ensureOpen = () => {
    if (closed) throw new StoreUnavailableError("disk store is closed");
  };

  return {
    name: "disk",
    async claim(key, ttlMs): Promise<ClaimResult> {
      ensureOpen();
      const t = now();
      const mark = marks.get(key);
      if (mark && mark.expiresAt > t) {
        return mark.id ? { status: "duplicate", id: mark.id } : { status: "in_progress" };
      }
      marks.set(key, { expiresAt: t + ttlMs });
      return { status: "claimed" };
    },
    append(record, key, dedupeTtlMs) {
      if (closed) return Promise.reject(new StoreUnavailableError("disk store is closed"));
      const expiresAt = now() + dedupeTtlMs;
      const existing = byId.get(record.id);
      if (existing) {
        marks.set(key, { id: record.id, expiresAt });
        return Promise.resolve({ inserted: false, seq: existing.seq });
      }
      const running = inflight.get(record.id);
      if (running) return running.then((r) => ({ inserted: false, seq: r.seq }));
      const stored: EventRecord = { ...record, seq: ++lastSeq };
      const line = Buffer.from(`${JSON.stringify({ e: stored, k: key, x: expiresAt })}\n`);
      const promise = new Promise<AppendResult>((resolve, reject) => {
        pending.push({ line, record: stored, key, expiresAt, resolve, reject });
      });
      inflight.set(record.id, promise);
      flushing ??= flush().finally(() => {
        flushing = undefined;
      });
      return promise;
    },
    async release(key) {
      if (!marks.get(key)?.id) marks.delete(key);
    },
    async get(id) {
      const entry = byId.get(id);
      return entry ? readRecord(entry) : undefined;
    },
    async list(query: EventQuery) {
      const { page, next } = pageSummaries(entries, query);
      return { events: await Promise.all(page.map(readRecord)), next };
    },
    async readAfter(afterSeq, limit, filter) {
      return Promise.all(summariesAfter(entries, afterSeq, limit, filter).map(readRecord));
    },
    async lastSeq() {
      // Only durable events count: `entries` holds what the journal has fsync'ed.
      return entries.length > 0 ? (entries[entries.length - 1] as Entry).seq : 0;
    },
    async purge(before) {
      ensureOpen();
      await idle();
      // Synchronously after `idle`: no flush can start writing before `compacting` is set.
      compacting = compact(before).finally(() => {
        compacting = undefined;
      });
      return compacting;
    },
    async ping() {
      ensureOpen();
      await handle.stat();
    },
    async kvGet(key) {
      return liveKv(key)?.value;
    },
    async kvSet(key, value, ttlMs) {
      const item = { value, expiresAt: now() + ttlMs };
      kv.set(key, item);
      await kvStorage.setItem(key, item);
    },
    async kvSetIfAbsent(key, value, ttlMs) {
      if (liveKv(key)) return false;
      const item = { value, expiresAt: now() + ttlMs };
      kv.set(key, item);
      await kvStorage.setItem(key, item);
      return true;
    },
    async kvDelete(key) {
      kv.delete(key);
      await kvStorage.removeItem(key);
    },
    async close() {
      if (closed) return;
      closed = true;
      await idle();
      await handle.close();
      await kvStorage.dispose();
      await unlink(join(dir, LOCK)).catch(() => {});
    },
  };
}

/**
 * Reads the journal line by line, calling `onLine` for each whole line; a torn or unparsable
 * tail (the unacknowledged write of a crashed process) is truncated. Returns the valid size.
 */
async function recover(
  handle: FileHandle,
  onLine: (line: JournalLine, offset: number, length: number) => void,
): Promise<number> {
  const { size } = await handle.stat();
  if (size === 0) return 0;
  const data = Buffer.allocUnsafe(size);
  let read = 0;
  while (read < size) {
    const { bytesRead } = await handle.read(data, read, size - read, read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  let offset = 0;
  while (offset < read) {
    const end = data.indexOf(10, offset);
    if (end === -1) break;
    let line: JournalLine;
    try {
      line = JSON.parse(data.toString("utf8", offset, end)) as JournalLine;
    } catch {
      // A bad line followed by good ones is corruption, not a torn tail: refuse to guess.
      if (data.indexOf(10, end + 1) !== -1) {
        throw new Error(`journal is corrupt at byte ${offset}; move it aside to start afresh`);
      }
      break;
    }
    onLine(line, offset, end + 1 - offset);
    offset = end + 1;
  }
  if (offset < size) {
    await handle.truncate(offset);
    await handle.sync();
  }
  return offset;
}

/** Takes the journal for this process; a lock left by a dead process is taken over. */
async function acquireLock(dir: string): Promise<void> {
  const path = join(dir, LOCK);
  try {
    const owner = Number((await readFile(path, "utf8")).trim());
    if (owner && owner !== process.pid && isAlive(owner)) {
      throw new Error(`the journal in ${dir} is in use by process ${owner}`);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await writeFile(path, String(process.pid));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
