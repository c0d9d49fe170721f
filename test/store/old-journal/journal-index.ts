/**
 * The old disk store's in-memory index as its driver kept it (test fixture): a summary and file
 * position per event, the dedupe marks, the small shared values and the sequence counter, plus
 * what the driver needed to append and compact. The import rebuilds only the replayed part
 * (adapters/store/sqlite/journal-import/journal-index.ts).
 */

import { JOURNAL_FORMAT, type JournalLine } from "../../../adapters/store/sqlite/journal-import/journal-line.ts";
import type { EventRecord } from "../../../src/store/contract.ts";
import { type EventSummary, summarizeEvent } from "../../../src/store/match-event-query.ts";
import type { CompactionPlan, Relocation } from "./compact-journal.ts";

export interface IndexEntry extends EventSummary {
  offset: number;
  length: number;
}

/** A dedupe mark: `id` once recorded, none while only claimed. */
export interface Mark {
  id?: string;
  expiresAt: number;
}

export interface KvItem {
  value: string;
  expiresAt: number;
}

/** Rough journal bytes of a mark or value line beyond its strings, for the compaction estimate. */
const LINE_OVERHEAD = 80;

export type JournalIndex = ReturnType<typeof createJournalIndex>;

export function createJournalIndex() {
  /** Ascending by seq (and by offset). */
  let entries: IndexEntry[] = [];
  const byId = new Map<string, IndexEntry>();
  const marks = new Map<string, Mark>();
  const kv = new Map<string, KvItem>();
  /** Highest seq on disk (or named by a sequence floor), and highest handed out (durable or not). */
  let durableSeq = 0;
  let assignedSeq = 0;
  /** Recovery only: retention lines, applied once the whole file was read. */
  const purges: { before: number; upTo: number }[] = [];

  const addEvent = (record: EventRecord, key: string, expiresAt: number, offset: number, length: number) => {
    const entry: IndexEntry = { ...summarizeEvent(record), offset, length };
    entries.push(entry);
    byId.set(entry.id, entry);
    marks.set(key, { id: entry.id, expiresAt });
    durableSeq = Math.max(durableSeq, entry.seq);
  };

  return {
    get entries(): readonly IndexEntry[] {
      return entries;
    },
    byId,
    marks,
    kv,
    /** The seq of a new append; seqs of failed appends are skipped, never reused while open. */
    nextSeq: () => {
      assignedSeq = Math.max(assignedSeq, durableSeq) + 1;
      return assignedSeq;
    },
    /** The highest durable seq; purges never lower it. */
    lastSeq: () => durableSeq,
    addEvent,

    /** Applies one recovered line. Retention is deferred to `finishRecovery` (one pass, not one per line). */
    replay(line: JournalLine, offset: number, length: number) {
      if ("e" in line) addEvent(line.e, line.k, line.x, offset, length);
      else if ("m" in line) marks.set(line.m, { id: line.i, expiresAt: line.x });
      else if ("kvdel" in line) kv.delete(line.kvdel);
      else if ("kv" in line) kv.set(line.kv, { value: line.v, expiresAt: line.x });
      else if ("purge" in line) purges.push({ before: line.purge, upTo: entries.length });
      else if ("seq" in line) durableSeq = Math.max(durableSeq, line.seq);
    },

    /** Applies the retention lines met during recovery and drops expired values. */
    finishRecovery(t: number) {
      let cutoff = Number.NEGATIVE_INFINITY;
      let p = purges.length - 1;
      const kept: IndexEntry[] = [];
      for (let i = entries.length - 1; i >= 0; i--) {
        // A retention line applies to the events written before it.
        while (p >= 0 && (purges[p] as { upTo: number }).upTo > i)
          cutoff = Math.max(cutoff, (purges[p--] as { before: number }).before);
        const entry = entries[i] as IndexEntry;
        if (entry.receivedAt >= cutoff) kept.push(entry);
      }
      kept.reverse();
      byId.clear();
      entries = [];
      // A re-delivery after its mark expired may follow a purged copy; only unpurged copies remain here.
      for (const entry of kept) {
        if (byId.has(entry.id)) continue;
        entries.push(entry);
        byId.set(entry.id, entry);
      }
      purges.length = 0;
      for (const [key, item] of kv) if (item.expiresAt <= t) kv.delete(key);
    },

    /** Removes events received before `before`; returns them. Their dedupe marks stay. */
    purgeBefore(before: number): IndexEntry[] {
      const removed = entries.filter((e) => e.receivedAt < before);
      if (removed.length === 0) return removed;
      entries = entries.filter((e) => e.receivedAt >= before);
      for (const entry of removed) byId.delete(entry.id);
      return removed;
    },

    /** Forgets expired marks and values. */
    dropExpired(t: number) {
      for (const [key, mark] of marks) if (mark.expiresAt <= t) marks.delete(key);
      for (const [key, item] of kv) if (item.expiresAt <= t) kv.delete(key);
    },

    /** Estimated journal bytes still needed (compaction runs when the rest is large). */
    liveBytes(): number {
      let bytes = 0;
      for (const entry of entries) bytes += entry.length;
      for (const [key, mark] of marks) if (mark.id && !byId.has(mark.id)) bytes += key.length + LINE_OVERHEAD;
      for (const [key, item] of kv) bytes += key.length + item.value.length + LINE_OVERHEAD;
      return bytes;
    },

    /** What a compacted journal holds; take it in the same tick as the journal size. */
    planCompaction(t: number, snapshotSize: number): CompactionPlan & { events: IndexEntry[] } {
      const lines = [JSON.stringify(JOURNAL_FORMAT), JSON.stringify({ seq: durableSeq })];
      for (const [key, mark] of marks) {
        // Marks of events retention removed still answer duplicates until their window ends.
        if (mark.id && mark.expiresAt > t && !byId.has(mark.id)) {
          lines.push(JSON.stringify({ m: key, i: mark.id, x: mark.expiresAt }));
        }
      }
      for (const [key, item] of kv) {
        if (item.expiresAt > t) lines.push(JSON.stringify({ kv: key, v: item.value, x: item.expiresAt }));
      }
      return { snapshotSize, events: entries.slice(), lines };
    },

    /** Moves offsets to the compacted file (runs in the tick of the swap). */
    relocate(plan: { snapshotSize: number; events: readonly IndexEntry[] }, relocation: Relocation) {
      for (const entry of entries) if (entry.offset >= plan.snapshotSize) entry.offset += relocation.shift;
      plan.events.forEach((entry, i) => {
        entry.offset = relocation.eventOffsets[i] as number;
      });
    },
  };
}
