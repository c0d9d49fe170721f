/**
 * Opening the disk outbox: replaying its log (cutting off a torn last line, refusing a corrupt
 * one in the middle). The lock file and directory sync are the journal's (`disk-journal/`).
 */
import type { FileHandle } from "node:fs/promises";
import type { DeliveryRecord, DestinationState } from "../../src/delivery/outbox-contract.ts";

/** One line of the log: created records + cursor, saved records, a destination state, removals. */
export type OutboxLine =
  | { c: number; r: DeliveryRecord[] }
  | { s: DeliveryRecord[] }
  | { d: DestinationState }
  | { x: [string, string][] };

/** Replays the log into `onLine`; cuts off a torn tail; returns the size of the whole lines. */
export async function recoverOutboxLog(handle: FileHandle, onLine: (line: OutboxLine) => void): Promise<number> {
  const { size } = await handle.stat();
  const chunkSize = 4 * 1024 * 1024;
  let offset = 0;
  let carry = Buffer.alloc(0);
  let position = 0;
  while (position < size) {
    const chunk = Buffer.allocUnsafe(Math.min(chunkSize, size - position));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let start = 0;
    for (let end = data.indexOf(10, start); end !== -1; end = data.indexOf(10, start)) {
      let line: OutboxLine;
      try {
        line = JSON.parse(data.toString("utf8", start, end)) as OutboxLine;
      } catch {
        // A bad line followed by good ones is corruption, not a torn tail: refuse to guess.
        if (data.indexOf(10, end + 1) !== -1 || position < size) {
          throw new Error(`outbox log is corrupt at byte ${offset}; move it aside to start afresh`);
        }
        start = data.length;
        break;
      }
      onLine(line);
      offset += end + 1 - start;
      start = end + 1;
    }
    carry = Buffer.from(data.subarray(start));
  }
  if (offset < size) {
    await handle.truncate(offset);
    await handle.sync();
  }
  return offset;
}
