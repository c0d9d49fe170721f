/**
 * Group commit: the single writer of the journal file.
 *
 * Lines queued while a batch is being written and fdatasync'ed form the next batch, so N
 * concurrent appends cost one write and one fdatasync instead of N. A line's `onDurable` runs
 * synchronously, in file order, right after the fdatasync of its batch, so the caller's index is
 * never ahead of the disk and never behind it at any point another task could observe.
 *
 * A failed batch is cut off again (retried before the next batch if the cut fails), so the file
 * stays a sequence of whole lines. Exclusive tasks (the last step of compaction) run between
 * batches and may swap the file.
 */
import type { FileHandle } from "node:fs/promises";
import { JOURNAL_FORMAT } from "../../../adapters/store/sqlite/journal-import/journal-line.ts";
import { StoreUnavailableError } from "../../../src/store/contract.ts";
import { frameLine } from "./frame-line.ts";

interface QueuedLine {
  json: string;
  onDurable(offset: number, length: number): void;
  resolve(): void;
  reject(error: unknown): void;
}

/** What an exclusive task may do with the journal while no batch is written. */
export interface ExclusiveAccess {
  readonly handle: FileHandle;
  readonly size: number;
  /** Makes `handle`, of `size` whole bytes, the journal. The caller closes the old handle. */
  swap(handle: FileHandle, size: number): void;
}

export interface JournalWriter {
  /** The current journal file; reads take it together with the offsets they read at. */
  readonly handle: FileHandle;
  /** Bytes of the journal that are durable. */
  readonly size: number;
  /** False while a failed batch could not be cut off yet. */
  readonly healthy: boolean;
  /** Queues one JSON line; resolves once it is durable and `onDurable` ran. */
  append(json: string, onDurable: (offset: number, length: number) => void): Promise<void>;
  /** Runs `task` between batches; lines queued meanwhile wait for it. */
  exclusive<T>(task: (access: ExclusiveAccess) => Promise<T>): Promise<T>;
  /** Writes everything queued, then closes the file. */
  close(): Promise<void>;
}

/** Creates the writer of a recovered journal of `size` valid bytes. */
export function createJournalWriter(initialHandle: FileHandle, initialSize: number): JournalWriter {
  let handle = initialHandle;
  let size = initialSize;
  let queue: QueuedLine[] = [];
  const exclusives: (() => Promise<void>)[] = [];
  let running: Promise<void> | undefined;
  /** Bytes past `size` left by a failed batch whose cut-off failed too. */
  let dirty = false;

  const writeFully = async (buffer: Buffer, position: number) => {
    for (let written = 0; written < buffer.length; ) {
      const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, position + written);
      if (bytesWritten === 0) throw new Error("the disk accepted no bytes");
      written += bytesWritten;
    }
  };

  const commit = async (batch: QueuedLine[]) => {
    let start = size;
    let lines: Buffer[] = [];
    let buffer: Buffer = Buffer.alloc(0);
    try {
      if (dirty) {
        await handle.truncate(size);
        dirty = false;
      }
      if (size === 0) {
        // The format header goes first, alone, so it can never be part of a torn batch.
        const header = frameLine(JSON.stringify(JOURNAL_FORMAT), 0);
        await writeFully(header, 0);
        await handle.datasync();
        size = header.length;
        start = size;
      }
      lines = batch.map((q) => frameLine(q.json, start));
      buffer = lines.length === 1 ? (lines[0] as Buffer) : Buffer.concat(lines);
      await writeFully(buffer, start);
      // The durability point: nothing of this batch is acknowledged before this returns.
      await handle.datasync();
    } catch (cause) {
      dirty = true;
      await handle.truncate(start).then(
        () => {
          dirty = false;
        },
        () => {},
      );
      const error = new StoreUnavailableError(`journal write failed: ${(cause as Error).message}`, { cause });
      for (const q of batch) q.reject(error);
      return;
    }
    size = start + buffer.length;
    let offset = start;
    for (const [i, q] of batch.entries()) {
      const length = (lines[i] as Buffer).length;
      try {
        q.onDurable(offset, length);
        q.resolve();
      } catch (error) {
        q.reject(error);
      }
      offset += length;
    }
  };

  const run = async () => {
    for (;;) {
      const task = exclusives.shift();
      if (task) {
        await task();
        continue;
      }
      if (queue.length === 0) {
        // Cleared in the same tick as the emptiness check, so a later append always restarts it.
        running = undefined;
        return;
      }
      const batch = queue;
      queue = [];
      await commit(batch);
    }
  };

  const kick = () => {
    // Started on a microtask so that appends issued in one tick share the first batch too.
    running ??= Promise.resolve().then(run);
  };

  const access: ExclusiveAccess = {
    get handle() {
      return handle;
    },
    get size() {
      return size;
    },
    swap(next, nextSize) {
      handle = next;
      size = nextSize;
      dirty = false;
    },
  };

  return {
    get handle() {
      return handle;
    },
    get size() {
      return size;
    },
    get healthy() {
      return !dirty;
    },
    append(json, onDurable) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ json, onDurable, resolve, reject });
        kick();
      });
    },
    exclusive(task) {
      return new Promise((resolve, reject) => {
        exclusives.push(() => task(access).then(resolve, reject));
        kick();
      });
    },
    async close() {
      while (running) await running;
      await handle.close();
    },
  };
}
