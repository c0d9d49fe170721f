/**
 * The one chunked line reader of the file-backed drivers (the disk store's recovery and
 * compaction, the disk outbox's recovery): reads `[from, to)` of a file in large sequential
 * chunks and yields every whole `\n`-terminated line in place, without copying it. Bytes after
 * the last newline (a write that never completed) are not yielded.
 */
import type { FileHandle } from "node:fs/promises";

/** One whole line: `data[start, end)` without its newline, `data[end]` is the newline. */
export interface LineSlice {
  /** Stays valid after the next line is read (a fresh buffer per chunk). */
  data: Buffer;
  start: number;
  end: number;
  /** File offset of `data[start]`. */
  offset: number;
}

const NEWLINE = 10;

/** The whole lines of `handle` in `[from, to)`, in file order. */
export async function* readLines(
  handle: FileHandle,
  from: number,
  to: number,
  chunkBytes = 4 * 1024 * 1024,
): AsyncGenerator<LineSlice> {
  let carry = Buffer.alloc(0);
  /** File offset of `carry[0]`. */
  let carryOffset = from;
  for (let position = from; position < to; ) {
    const chunk = Buffer.allocUnsafe(Math.min(chunkBytes, to - position));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let start = 0;
    for (let end = data.indexOf(NEWLINE, start); end !== -1; end = data.indexOf(NEWLINE, start)) {
      yield { data, start, end, offset: carryOffset + start };
      start = end + 1;
    }
    carry = data.subarray(start);
    carryOffset += start;
  }
}
