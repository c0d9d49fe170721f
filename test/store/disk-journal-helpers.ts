/**
 * Helpers for the disk journal's own tests: temp directories, a store on a test clock, and a
 * reader of the raw journal file (to damage it on purpose and to look at its batches).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EventRecord, StoreDriver } from "../../src/store/contract.ts";
import { type DiskStoreOptions, diskStore, type LegacyDiskStore } from "./old-journal/disk-store.ts";
import { keyOf, T0 } from "./sample-records.ts";

export const WINDOW = 72 * 3600_000;

/** Temp directories of one test file, removed by `removeAll`. */
export function createTempDirs() {
  const dirs: string[] = [];
  return {
    async make() {
      const dir = await mkdtemp(join(tmpdir(), "gw-journal-"));
      dirs.push(dir);
      return dir;
    },
    async removeAll() {
      await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}

/** A settable clock shared by the stores a test opens. */
export function createClock(start = T0) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

/** Opens the store in `dir` reading every record from the file (no cache) unless told otherwise. */
export function openStore(dir: string, now: () => number, options: Partial<DiskStoreOptions> = {}) {
  return diskStore({ dir, now, cacheSize: 0, ...options });
}

/** Appends `record` under its own dedupe key with the default window. */
export function appendRecord(store: StoreDriver | LegacyDiskStore, record: EventRecord) {
  return store.append(record, keyOf(record), WINDOW);
}

/** Every event of a store, oldest first (reads each back from the file). */
export async function readAll(store: StoreDriver | LegacyDiskStore): Promise<EventRecord[]> {
  return store.readAfter(0, 100_000);
}

export interface RawLine {
  /** Byte offset of the line in the file. */
  offset: number;
  /** Byte length including the newline. */
  length: number;
  /** Offset of the batch the line was written in. */
  batch: number;
  entry: Record<string, unknown>;
}

export function journalPath(dir: string): string {
  return join(dir, "journal.log");
}

/** Parses the journal file without checking checksums. */
export async function readJournalLines(dir: string): Promise<RawLine[]> {
  const data = await readFile(journalPath(dir));
  const lines: RawLine[] = [];
  for (let start = 0, end = data.indexOf(10); end !== -1; start = end + 1, end = data.indexOf(10, start)) {
    lines.push({
      offset: start,
      length: end + 1 - start,
      batch: Number.parseInt(data.toString("latin1", start + 9, start + 21), 16),
      entry: JSON.parse(data.toString("utf8", start + 22, end)) as Record<string, unknown>,
    });
  }
  return lines;
}
