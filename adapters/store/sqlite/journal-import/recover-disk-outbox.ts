/**
 * Reading the old disk outbox's log (`outbox.log`): replaying it (cutting off a torn last line,
 * refusing a corrupt one in the middle). The reader of the sqlite store's upgrade import
 * (adapters/store/sqlite/import-disk-journal.ts, through a read-only handle, so nothing is cut)
 * and of the old writer (disk-outbox.ts). Kept next to the journal it was written beside: both
 * are the old data directory's format, no registered driver.
 */
import type { FileHandle } from "node:fs/promises";
import type { DeliveryRecord, DestinationState } from "../../../../src/delivery/outbox-contract.ts";
import { readLines } from "./read-lines.ts";

/** One line of the log: created records + cursor, saved records, a destination state, removals. */
export type OutboxLine =
  | { c: number; r: DeliveryRecord[] }
  | { s: DeliveryRecord[] }
  | { d: DestinationState }
  | { x: [string, string][] };

/** Replays the log into `onLine`; cuts off a torn tail; returns the size of the whole lines. */
export async function recoverOutboxLog(handle: FileHandle, onLine: (line: OutboxLine) => void): Promise<number> {
  const { size } = await handle.stat();
  /** File offset just after the last good line. */
  let offset = 0;
  let damagedAt: number | undefined;
  for await (const { data, start, end, offset: at } of readLines(handle, 0, size)) {
    // A bad line followed by any whole line is corruption, not a torn tail: refuse to guess.
    if (damagedAt !== undefined) {
      throw new Error(`outbox log is corrupt at byte ${damagedAt}; move it aside to start afresh`);
    }
    let line: OutboxLine;
    try {
      line = JSON.parse(data.toString("utf8", start, end)) as OutboxLine;
    } catch {
      damagedAt = at;
      continue;
    }
    onLine(line);
    offset = at + end + 1 - start;
  }
  if (offset < size) {
    await handle.truncate(offset);
    await handle.sync();
  }
  return offset;
}
