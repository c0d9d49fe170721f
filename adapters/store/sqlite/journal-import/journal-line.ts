/**
 * The journal's line format: `<crc32, 8 hex> <batch offset, 12 hex> <json>\n`.
 *
 * The CRC (over `<offset> <json>`) tells a damaged line from a whole one. The batch offset is
 * where the group-commit batch holding the line begins (for lines copied by compaction: the
 * line's own offset). Recovery uses it to tell a torn last batch, which was never acknowledged
 * and may be cut off, from damage to acknowledged data, which must stop start-up: a valid line
 * whose batch begins after a damaged line was written after that line was already durable.
 * The header has a fixed width, so compaction could rewrite it without moving the JSON.
 * Only the reading side is here (the import); the old writer is kept as a test fixture
 * (test/store/old-journal/) to produce journals in this format.
 */
import { crc32 } from "node:zlib";
import type { EventRecord } from "../../../../src/store/contract.ts";

/** One journal entry, discriminated by its first key. */
export type JournalLine =
  /** An event and the dedupe mark of its upstream identity. */
  | { e: EventRecord; k: string; x: number }
  /** The dedupe mark of an event that retention already removed. */
  | { m: string; i: string; x: number }
  /** A small shared value. */
  | { kv: string; v: string; x: number }
  | { kvdel: string }
  /** Retention: events received before `purge` (epoch ms) written earlier in the file are gone. */
  | { purge: number }
  /** Sequence floor, written by compaction so seq never goes back even when every event went. */
  | { seq: number }
  /** The first line of every journal (JOURNAL_FORMAT). */
  | { journal: string; version: number };

/**
 * Names the format. Written alone and fdatasync'ed before the first batch, so a journal of
 * another format (or version) is refused at start-up instead of being cut off as torn.
 */
export const JOURNAL_FORMAT = { journal: "svc-gateway-events", version: 1 } as const;

/** True when `line` is the header of the format this code reads. */
export function isFormatHeader(line: JournalLine): boolean {
  return "journal" in line && line.journal === JOURNAL_FORMAT.journal && line.version === JOURNAL_FORMAT.version;
}

export const HEADER_LENGTH = 22;
/** Where the CRC-covered part of a line begins (after the CRC and its space). */
export const CRC_START = 9;

/**
 * Validates the line in `buffer[start, end)` (`end` at its newline). Returns its batch offset and
 * parsed entry, or undefined when the line is damaged.
 */
export function parseLine(
  buffer: Buffer,
  start: number,
  end: number,
): { batch: number; line: JournalLine } | undefined {
  if (end - start <= HEADER_LENGTH || buffer[start + 8] !== 32 || buffer[start + 21] !== 32) return undefined;
  const crc = Number.parseInt(buffer.toString("latin1", start, start + 8), 16);
  if (crc !== crc32(buffer.subarray(start + CRC_START, end))) return undefined;
  const batch = Number.parseInt(buffer.toString("latin1", start + CRC_START, start + 21), 16);
  try {
    return { batch, line: JSON.parse(buffer.toString("utf8", start + HEADER_LENGTH, end)) as JournalLine };
  } catch {
    return undefined;
  }
}
