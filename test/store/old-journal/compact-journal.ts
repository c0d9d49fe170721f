/**
 * Compaction: rewrites the journal without the records retention removed, while appends go on.
 *
 * The bulk copy (format header, sequence floor, marks and values of the snapshot, then the kept
 * events) runs concurrently with appends to the old file. Only the end runs exclusively between
 * two batches: copy the lines appended since the snapshot, fdatasync, rename over the journal,
 * swap the writer's file, fsync the directory. Every copied line is re-framed as its own batch (see
 * journal-line.ts), after its checksum was checked.
 */
import type { FileHandle } from "node:fs/promises";
import { open, rename, unlink } from "node:fs/promises";
import { readLines } from "../../../adapters/store/sqlite/journal-import/read-lines.ts";
import { frameLine, reframeLine } from "./frame-line.ts";
import type { JournalWriter } from "./journal-writer.ts";

const IO_BYTES = 4 * 1024 * 1024;

export interface CompactionPlan {
  /** Journal size when the plan was taken; everything after it is copied at the end. */
  snapshotSize: number;
  /** Kept events in file order, at their offsets in the current file. */
  events: readonly { offset: number; length: number }[];
  /** JSON of the other entries to keep, written first; the first must be the format header. */
  lines: readonly string[];
}

export interface Relocation {
  /** New offset of each event of the plan. */
  eventOffsets: number[];
  /** Added to the offset of every line at or after `snapshotSize`. */
  shift: number;
}

/**
 * Compacts the journal at `path`. `onSwap` runs synchronously at the moment the new file
 * becomes the journal, so the caller can move its offsets in the same tick.
 */
export async function compactJournal(
  writer: JournalWriter,
  path: string,
  dir: string,
  plan: CompactionPlan,
  onSwap: (relocation: Relocation) => void,
): Promise<void> {
  const tmpPath = `${path}.compact`;
  const out = await open(tmpPath, "w+");
  const output = createOutput(out);
  let swapped = false;
  try {
    // The plan's lines first: they begin with the format header, which must be the first line.
    for (const json of plan.lines) await output.push(frameLine(json, output.offset));
    const eventOffsets: number[] = [];
    for (const run of contiguousRuns(plan.events)) {
      for await (const line of wholeLines(writer.handle, run.from, run.to)) {
        eventOffsets.push(output.offset);
        await output.push(line);
      }
    }
    if (eventOffsets.length !== plan.events.length) throw new Error("compaction found fewer events than indexed");
    await writer.exclusive(async (access) => {
      const shift = output.offset - plan.snapshotSize;
      for await (const line of wholeLines(access.handle, plan.snapshotSize, access.size)) await output.push(line);
      await output.flush();
      await out.datasync();
      await rename(tmpPath, path);
      const old = access.handle;
      access.swap(out, output.offset);
      swapped = true;
      onSwap({ eventOffsets, shift });
      await old.close();
      await syncDirectory(dir);
    });
  } finally {
    if (!swapped) {
      await out.close().catch(() => {});
      await unlink(tmpPath).catch(() => {});
    }
  }
}

/** fsyncs a directory, so that a created or renamed file in it survives power loss. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Groups events that sit next to each other in the file into ranges read at once. */
function* contiguousRuns(events: readonly { offset: number; length: number }[]) {
  let run: { from: number; to: number } | undefined;
  for (const { offset, length } of events) {
    if (run && run.to === offset && run.to - run.from < IO_BYTES) run.to += length;
    else {
      if (run) yield run;
      run = { from: offset, to: offset + length };
    }
  }
  if (run) yield run;
}

/** The whole lines of `handle` in `[from, to)`, each with its newline; the range must end with one. */
async function* wholeLines(handle: FileHandle, from: number, to: number) {
  let next = from;
  for await (const { data, start, end, offset } of readLines(handle, from, to, IO_BYTES)) {
    next = offset + end + 1 - start;
    yield data.subarray(start, end + 1);
  }
  if (next !== to) throw new Error("compaction met a range that does not end with a whole line");
}

/** Buffered sequential writes to the new file; `push` re-frames each line at its new offset. */
function createOutput(handle: FileHandle) {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let written = 0;
  const flush = async () => {
    const buffer = Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    for (let done = 0; done < buffer.length; ) {
      const { bytesWritten } = await handle.write(buffer, done, buffer.length - done, written);
      if (bytesWritten === 0) throw new Error("the disk accepted no bytes");
      done += bytesWritten;
      written += bytesWritten;
    }
  };
  return {
    get offset() {
      return written + pendingBytes;
    },
    async push(line: Buffer) {
      reframeLine(line, 0, line.length - 1, written + pendingBytes);
      pending.push(line);
      pendingBytes += line.length;
      if (pendingBytes >= IO_BYTES) await flush();
    },
    flush,
  };
}
