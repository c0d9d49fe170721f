/**
 * Reads a SQLite write-ahead log left behind by a process that did not close the database (a
 * crash, `kill -9`, power loss), before SQLite recovers it, so start-up can say what recovery
 * keeps and what it drops (docs/storage.md#the-sqlite-store: start-up is honest about damage).
 *
 * Format (sqlite.org/fileformat2.html, "WAL file format"): a 32-byte header (magic, version,
 * page size, checkpoint sequence, two salts, checksum), then frames of a 24-byte header (page
 * number, database size after commit or 0, the two salts, a cumulative checksum) and one page.
 * SQLite keeps the frames up to the last commit frame whose salts and checksums are valid;
 * everything after it was never committed, so never acknowledged.
 */
import { readFile } from "node:fs/promises";

export interface WalReport {
  /** Size of the file in bytes. */
  bytes: number;
  /** Committed transactions in the log (kept by recovery). */
  transactions: number;
  /** Frames kept by recovery. */
  keptFrames: number;
  /** Valid frames after the last commit: a transaction that was being written (dropped). */
  uncommittedFrames: number;
  /** Bytes after the kept frames (the unfinished transaction, a torn frame, or stale frames). */
  ignoredBytes: number;
}

const HEADER = 32;
const FRAME_HEADER = 24;

/** Inspects the WAL at `path`; undefined when it is absent or empty (a clean shutdown). */
export async function inspectWal(path: string): Promise<WalReport | undefined> {
  const data = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!data || data.length === 0) return undefined;
  const empty = { bytes: data.length, transactions: 0, keptFrames: 0, uncommittedFrames: 0 };
  if (data.length < HEADER) return { ...empty, ignoredBytes: data.length };
  const magic = data.readUInt32BE(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return { ...empty, ignoredBytes: data.length };
  const bigEndian = magic === 0x377f0683;
  const rawPageSize = data.readUInt32BE(8);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const salt1 = data.readUInt32BE(16);
  const salt2 = data.readUInt32BE(20);
  let sums = checksum(data, 0, 24, [0, 0], bigEndian);
  if (sums[0] !== data.readUInt32BE(24) || sums[1] !== data.readUInt32BE(28)) {
    return { ...empty, ignoredBytes: data.length };
  }
  let transactions = 0;
  let keptFrames = 0;
  let uncommittedFrames = 0;
  let keptEnd = HEADER;
  for (let at = HEADER; at + FRAME_HEADER + pageSize <= data.length; at += FRAME_HEADER + pageSize) {
    if (data.readUInt32BE(at + 8) !== salt1 || data.readUInt32BE(at + 12) !== salt2) break;
    sums = checksum(data, at, at + 8, sums, bigEndian);
    sums = checksum(data, at + FRAME_HEADER, at + FRAME_HEADER + pageSize, sums, bigEndian);
    if (sums[0] !== data.readUInt32BE(at + 16) || sums[1] !== data.readUInt32BE(at + 20)) break;
    uncommittedFrames++;
    if (data.readUInt32BE(at + 4) !== 0) {
      transactions++;
      keptFrames += uncommittedFrames;
      uncommittedFrames = 0;
      keptEnd = at + FRAME_HEADER + pageSize;
    }
  }
  return { bytes: data.length, transactions, keptFrames, uncommittedFrames, ignoredBytes: data.length - keptEnd };
}

/** SQLite's WAL checksum over `data[start, end)` (a multiple of 8 bytes), continuing from `sums`. */
function checksum(data: Buffer, start: number, end: number, sums: [number, number], bigEndian: boolean) {
  let s0 = sums[0];
  let s1 = sums[1];
  for (let i = start; i < end; i += 8) {
    const x0 = bigEndian ? data.readUInt32BE(i) : data.readUInt32LE(i);
    const x1 = bigEndian ? data.readUInt32BE(i + 4) : data.readUInt32LE(i + 4);
    s0 = (s0 + x0 + s1) >>> 0;
    s1 = (s1 + x1 + s0) >>> 0;
  }
  return [s0, s1] as [number, number];
}
