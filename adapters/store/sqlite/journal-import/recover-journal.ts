/**
 * Journal recovery: a sequential, chunked read of the whole file that hands every whole line to
 * the index builder and decides what a damaged line means.
 *
 * Only the last group-commit batch can be torn by a crash, because a batch is written only after
 * the previous one was fdatasync'ed, and nothing in a batch is acknowledged before its own
 * fdatasync returned. So a damaged line followed only by lines of the same batch (or by nothing)
 * is a torn write: the file is cut at the damaged line. A damaged line followed by any line of a
 * later batch is damage to acknowledged data: recovery refuses rather than silently dropping it.
 */
import type { FileHandle } from "node:fs/promises";
import { isFormatHeader, JOURNAL_FORMAT, type JournalLine, parseLine } from "./journal-line.ts";
import { readLines } from "./read-lines.ts";

const CHUNK_BYTES = 8 * 1024 * 1024;

/** Called once per whole, valid line in file order. */
export type OnJournalLine = (line: JournalLine, offset: number, length: number) => void;

/**
 * Reads the journal behind `handle` (its first line must be the format header), calls `onLine` for each valid line, truncates a torn tail
 * and returns the size of the valid journal. Throws when acknowledged data is damaged.
 */
export async function recoverJournal(handle: FileHandle, path: string, onLine: OnJournalLine): Promise<number> {
  const { size } = await handle.stat();
  let damagedAt: number | undefined;
  /** File offset just after the last whole line. */
  let wholeSize = 0;
  for await (const { data, start, end, offset } of readLines(handle, 0, size, CHUNK_BYTES)) {
    wholeSize = offset + end + 1 - start;
    const parsed = parseLine(data, start, end);
    if (offset === 0 && !(parsed && isFormatHeader(parsed.line))) {
      // A whole first line that is not our header: another format or version, never a torn write.
      throw new Error(
        `${path} does not start with a ${JOURNAL_FORMAT.journal} v${JOURNAL_FORMAT.version} journal header ` +
          "(written by another version, or damaged); move it aside to start empty",
      );
    }
    if (damagedAt === undefined) {
      if (parsed) onLine(parsed.line, offset, end + 1 - start);
      else damagedAt = offset;
    } else if (parsed && parsed.batch > damagedAt) {
      throw new Error(
        `journal ${path} is damaged at byte ${damagedAt} and records written after it are intact, ` +
          "so this is not a torn write; restore the file from a backup or move it aside to start empty",
      );
    }
  }
  // Bytes after the last newline are a write that never completed.
  const validSize = damagedAt ?? wholeSize;
  if (validSize < size) {
    await handle.truncate(validSize);
    await handle.sync();
  }
  return validSize;
}
