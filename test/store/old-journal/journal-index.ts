/**
 * The old disk store's in-memory index as its driver kept it (test fixture): the index the import
 * rebuilds (adapters/store/sqlite/journal-import/journal-index.ts) plus what the driver needed to
 * append and compact: the sequence counter, retention, expiry, the compaction plan.
 */

import {
  createJournalIndex as createReplayedIndex,
  type IndexEntry,
} from "../../../adapters/store/sqlite/journal-import/journal-index.ts";
import { JOURNAL_FORMAT } from "../../../adapters/store/sqlite/journal-import/journal-line.ts";
import { builtinServices } from "../../../src/services/registry.ts";
import { createEventSummarizer } from "../../../src/store/match-event-query.ts";
import type { CompactionPlan, Relocation } from "./compact-journal.ts";

export type { IndexEntry, KvItem, Mark } from "../../../adapters/store/sqlite/journal-import/journal-index.ts";

/** Rough journal bytes of a mark or value line beyond its strings, for the compaction estimate. */
const LINE_OVERHEAD = 80;

export type JournalIndex = ReturnType<typeof createJournalIndex>;

export function createJournalIndex() {
  const index = createReplayedIndex(createEventSummarizer(builtinServices));
  const { marks, kv, byId } = index;
  /** Highest seq handed out (durable or not). */
  let assignedSeq = 0;

  return Object.assign(index, {
    /** The seq of a new append; seqs of failed appends are skipped, never reused while open. */
    nextSeq: () => {
      assignedSeq = Math.max(assignedSeq, index.lastSeq()) + 1;
      return assignedSeq;
    },

    /** Removes events received before `before`; returns them. Their dedupe marks stay. */
    purgeBefore(before: number): IndexEntry[] {
      const removed = index.entries.filter((e) => e.receivedAt < before);
      if (removed.length > 0) index.setEntries(index.entries.filter((e) => e.receivedAt >= before));
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
      for (const entry of index.entries) bytes += entry.length;
      for (const [key, mark] of marks) if (mark.id && !byId.has(mark.id)) bytes += key.length + LINE_OVERHEAD;
      for (const [key, item] of kv) bytes += key.length + item.value.length + LINE_OVERHEAD;
      return bytes;
    },

    /** What a compacted journal holds; take it in the same tick as the journal size. */
    planCompaction(t: number, snapshotSize: number): CompactionPlan & { events: IndexEntry[] } {
      const lines = [JSON.stringify(JOURNAL_FORMAT), JSON.stringify({ seq: index.lastSeq() })];
      for (const [key, mark] of marks) {
        // Marks of events retention removed still answer duplicates until their window ends.
        if (mark.id && mark.expiresAt > t && !byId.has(mark.id)) {
          lines.push(JSON.stringify({ m: key, i: mark.id, x: mark.expiresAt }));
        }
      }
      for (const [key, item] of kv) {
        if (item.expiresAt > t) lines.push(JSON.stringify({ kv: key, v: item.value, x: item.expiresAt }));
      }
      return { snapshotSize, events: index.entries.slice(), lines };
    },

    /** Moves offsets to the compacted file (runs in the tick of the swap). */
    relocate(plan: { snapshotSize: number; events: readonly IndexEntry[] }, relocation: Relocation) {
      for (const entry of index.entries) if (entry.offset >= plan.snapshotSize) entry.offset += relocation.shift;
      plan.events.forEach((entry, i) => {
        entry.offset = relocation.eventOffsets[i] as number;
      });
    },
  });
}
