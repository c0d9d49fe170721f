/**
 * The writing side of the old journal's line format (adapters/store/sqlite/journal-import/
 * journal-line.ts reads it): frames a line with its CRC and batch offset, and rewrites the
 * header of a copied line. Part of the frozen old writer the import tests produce journals with.
 */
import { crc32 } from "node:zlib";
import { CRC_START, HEADER_LENGTH } from "../../../adapters/store/sqlite/journal-import/journal-line.ts";

const MAX_OFFSET = 2 ** 48;

/** Frames `json` as one line of a batch that begins at `batchOffset`. */
export function frameLine(json: string, batchOffset: number): Buffer {
  const body = Buffer.byteLength(json);
  const line = Buffer.allocUnsafe(HEADER_LENGTH + body + 1);
  line.write(json, HEADER_LENGTH, "utf8");
  line[line.length - 1] = 10;
  writeHeader(line, 0, line.length - 1, batchOffset);
  return line;
}

/**
 * Rewrites in place the header of the whole line `buffer[start, end)` (`end` at its newline) to
 * name `batchOffset`, after checking its CRC: compaction must not launder a damaged line.
 */
export function reframeLine(buffer: Buffer, start: number, end: number, batchOffset: number): void {
  const crc = Number.parseInt(buffer.toString("latin1", start, start + 8), 16);
  if (crc !== crc32(buffer.subarray(start + CRC_START, end))) {
    throw new Error("journal line failed its checksum during compaction");
  }
  writeHeader(buffer, start, end, batchOffset);
}

function writeHeader(buffer: Buffer, start: number, end: number, batchOffset: number): void {
  if (batchOffset >= MAX_OFFSET) throw new Error("journal offset out of range");
  buffer.write(`${batchOffset.toString(16).padStart(12, "0")} `, start + CRC_START, "latin1");
  buffer[start + 8] = 32;
  const crc = crc32(buffer.subarray(start + CRC_START, end));
  buffer.write(crc.toString(16).padStart(8, "0"), start, "latin1");
}
