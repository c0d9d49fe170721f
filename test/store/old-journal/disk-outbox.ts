/**
 * The previous disk outbox, frozen as a test fixture: no longer a driver (the outbox lives in the
 * sqlite store's database, adapters/outbox/registry.ts). Its recovery (recover-disk-outbox.ts,
 * with the upgrade import in adapters/store/sqlite/journal-import/) is the import's reader; this
 * writer is kept so the import is tested against logs written by the old code itself.
 *
 * What it was: its own append-only log (`outbox.log`) next to the event journal, with group
 * commit and compaction, like the journal and for the same reasons.
 *
 * Why a log and not a record per file: every state change of a delivery must survive `kill -9`
 * before the engine relies on it, and a backlog of thousands changes state thousands of times a
 * second. A log lets every write that arrives while an fdatasync runs share the next one (one
 * write and one sync per batch). Each line holds whole records (last write wins on replay), so
 * recovery is a sequential read into the same in-memory index the memory driver uses; a torn
 * last line (crash mid-write) is cut off, because its writer was never told it was durable.
 *
 * Changes reach the index only once durable, so a failed write never leaves memory ahead of
 * disk (the routing cursor in particular must never pass records that are not on disk).
 * Compaction rewrites the live state to a temp file, fsyncs, renames and fsyncs the directory,
 * once the log has grown well past what it holds.
 */
import type { FileHandle } from "node:fs/promises";
import { mkdir, open, rename } from "node:fs/promises";
import { join } from "node:path";
import { acquireLockFile } from "../../../adapters/store/sqlite/journal-import/journal-lock.ts";
import {
  type OutboxLine,
  recoverOutboxLog,
} from "../../../adapters/store/sqlite/journal-import/recover-disk-outbox.ts";
import { createLocalLeases } from "../../../src/delivery/local-leases.ts";
import {
  type DeliveryRecord,
  deliveryKey,
  type OutboxFactory,
  type OutboxStore,
} from "../../../src/delivery/outbox-contract.ts";
import { createOutboxIndex, type OutboxIndex, readFromIndex } from "../../../src/delivery/outbox-index.ts";
import { syncDirectory } from "./compact-journal.ts";

export interface DiskOutboxOptions {
  /** Directory of the log (the store's data dir); created when missing. */
  dir: string;
  /** Do not compact below this log size in bytes. Default 8 MiB. */
  compactMinBytes?: number;
}

interface Pending {
  line: OutboxLine;
  bytes: Buffer;
  done(error?: unknown): void;
}

const LOG = "outbox.log";
const LOCK = "outbox.lock";

/** The disk outbox driver: opens (and recovers) the outbox log in `options.dir`. */
export const diskOutbox: OutboxFactory<DiskOutboxOptions> = async (options): Promise<OutboxStore> => {
  const { dir } = options;
  const compactMinBytes = options.compactMinBytes ?? 8 * 1024 * 1024;
  await mkdir(dir, { recursive: true });
  const releaseLock = await acquireLockFile(dir, LOCK, "outbox");
  const path = join(dir, LOG);
  const index = createOutboxIndex();
  const leases = createLocalLeases(index);
  let opened: FileHandle | undefined;
  let size: number;
  try {
    await (await open(path, "a")).close();
    opened = await open(path, "r+");
    size = await recoverOutboxLog(opened, (line) => applyLine(index, line));
  } catch (error) {
    // A refused log leaves nothing held, so a fixed one can be opened again in this process.
    await opened?.close();
    await releaseLock();
    throw error;
  }
  let handle: FileHandle = opened;
  /** Size after the last compaction plus bytes of created records since: roughly the live data. */
  let liveBytes = size;

  let pending: Pending[] = [];
  let flushing: Promise<void> | undefined;
  /** Keys of records whose creation is being written (dedupe of concurrent creates). */
  const creating = new Set<string>();
  let closed = false;

  const compact = async () => {
    const tmp = `${path}.compact`;
    const out = await open(tmp, "w");
    let offset = 0;
    const write = async (line: OutboxLine) => {
      const bytes = Buffer.from(`${JSON.stringify(line)}\n`);
      await out.write(bytes, 0, bytes.length, offset);
      offset += bytes.length;
    };
    try {
      await write({ c: index.cursor, r: [] });
      let chunk: DeliveryRecord[] = [];
      for (const record of index.all()) {
        chunk.push(record);
        if (chunk.length === 500) {
          await write({ s: chunk });
          chunk = [];
        }
      }
      if (chunk.length > 0) await write({ s: chunk });
      for (const state of index.destinationStates.values()) await write({ d: state });
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(tmp, path);
    await syncDirectory(dir);
    await handle.close();
    handle = await open(path, "r+");
    size = offset;
    liveBytes = offset;
  };

  const flush = async () => {
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      const buffer = Buffer.concat(batch.map((p) => p.bytes));
      try {
        let written = 0;
        while (written < buffer.length) {
          const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, size + written);
          written += bytesWritten;
        }
        // Durability point: the batch is on disk once datasync returns.
        await handle.datasync();
      } catch (cause) {
        await handle.truncate(size).catch(() => {});
        for (const p of batch) p.done(new Error(`outbox write failed: ${(cause as Error).message}`));
        continue;
      }
      size += buffer.length;
      for (const p of batch) {
        applyLine(index, p.line);
        if ("c" in p.line) liveBytes += p.bytes.length;
        p.done();
      }
      if (size > compactMinBytes && size > 3 * liveBytes) await compact().catch(() => {});
    }
  };

  const enqueue = (line: OutboxLine, onDurable?: () => void): Promise<void> => {
    if (closed) return Promise.reject(new Error("disk outbox is closed"));
    return new Promise<void>((resolve, reject) => {
      pending.push({
        line,
        bytes: Buffer.from(`${JSON.stringify(line)}\n`),
        done: (error) => {
          onDurable?.();
          if (error) reject(error);
          else resolve();
        },
      });
      flushing ??= flush().finally(() => {
        flushing = undefined;
      });
    });
  };

  return {
    name: "disk",
    async readCursor() {
      return index.cursor;
    },
    async createDeliveries(records, cursor, lease) {
      const fresh = records.filter((r) => {
        const key = deliveryKey(r.eventId, r.destinationId);
        if (creating.has(key) || index.get(r.eventId, r.destinationId)) return false;
        creating.add(key);
        return true;
      });
      if (fresh.length === 0 && cursor <= index.cursor) return [];
      await enqueue({ c: cursor, r: fresh }, () => {
        for (const r of fresh) creating.delete(deliveryKey(r.eventId, r.destinationId));
      });
      const created = fresh.map((r) => index.get(r.eventId, r.destinationId) as DeliveryRecord);
      leases.afterCreate(created, lease);
      return created;
    },
    async saveDeliveries(records) {
      if (records.length > 0) await enqueue({ s: [...records] });
      leases.afterSave(records);
    },
    ...readFromIndex(index),
    claimDue: leases.claimDue,
    renewLeases: leases.renewLeases,
    async saveDestinationState(state) {
      await enqueue({ d: { ...state } });
    },
    async purge(before) {
      const gone = index.purge(before);
      // The removal itself is logged so a restart does not bring purged records back.
      if (gone.length > 0) await enqueue({ x: gone.map((r) => [r.eventId, r.destinationId]) });
      return gone.length;
    },
    async close() {
      if (closed) return;
      closed = true;
      while (flushing) await flushing;
      await handle.close();
      await releaseLock();
    },
  };
};

function applyLine(index: OutboxIndex, line: OutboxLine): void {
  if ("c" in line) index.create(line.r, line.c);
  else if ("s" in line) index.save(line.s);
  else if ("d" in line) index.destinationStates.set(line.d.id, line.d);
  else for (const [eventId, destinationId] of line.x) index.remove(eventId, destinationId);
}
