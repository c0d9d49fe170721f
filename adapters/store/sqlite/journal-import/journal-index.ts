/**
 * The old disk store's index, as the import rebuilds it: a summary and file position per event
 * (the records stay in the journal until copied), the dedupe marks, the small shared values and
 * the sequence floor, replayed from the journal with the old driver's rules (retention lines
 * apply to the events written before them; the last copy of an id wins).
 */
import type { EventRecord } from "../../../../src/store/contract.ts";
import type { EventSummary, SummarizeEvent } from "../../../../src/store/match-event-query.ts";
import type { JournalLine } from "./journal-line.ts";

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

/**
 * Creates an empty index; feed it every recovered line (`replay`), then `finishRecovery`.
 * `summarizeEvent` is the store's (it reads each event's external id where its service says).
 */
export function createJournalIndex(summarizeEvent: SummarizeEvent) {
  /** Ascending by seq (and by offset). */
  let entries: IndexEntry[] = [];
  const byId = new Map<string, IndexEntry>();
  const marks = new Map<string, Mark>();
  const kv = new Map<string, KvItem>();
  /** Highest seq on disk (or named by a sequence floor). */
  let durableSeq = 0;
  /** Retention lines, applied once the whole file was read. */
  const purges: { before: number; upTo: number }[] = [];

  const addEvent = (record: EventRecord, key: string, expiresAt: number, offset: number, length: number) => {
    const entry: IndexEntry = { ...summarizeEvent(record), offset, length };
    entries.push(entry);
    byId.set(entry.id, entry);
    marks.set(key, { id: entry.id, expiresAt });
    durableSeq = Math.max(durableSeq, entry.seq);
  };

  /** Replaces the entries (ascending by seq); the first copy of an id wins. */
  const setEntries = (next: readonly IndexEntry[]) => {
    byId.clear();
    entries = [];
    for (const entry of next) {
      if (byId.has(entry.id)) continue;
      entries.push(entry);
      byId.set(entry.id, entry);
    }
  };

  return {
    get entries(): readonly IndexEntry[] {
      return entries;
    },
    byId: byId as ReadonlyMap<string, IndexEntry>,
    marks,
    kv,
    /** The highest durable seq; purges never lower it. */
    lastSeq: () => durableSeq,
    addEvent,
    setEntries,

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
      // A re-delivery after its mark expired may follow a purged copy; only unpurged copies remain here.
      setEntries(kept);
      purges.length = 0;
      for (const [key, item] of kv) if (item.expiresAt <= t) kv.delete(key);
    },
  };
}
