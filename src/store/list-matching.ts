/**
 * Lists events matching a content filter on any store driver: SQL drivers (`filterPushdown`)
 * answer an exactly translatable filter in one indexed query; otherwise pages of the driver's
 * own `list` (narrowed by the store where it can) are checked with the compiled predicate.
 * Both paths give the same events (test/filters/filter-sql.property.test.ts).
 */
import { createEventFilter } from "../filters/event-filter.ts";
import { translateFilterToSql } from "../filters/filter-to-sql.ts";
import type { EventPage, EventQuery, EventRecord, StoreDriver } from "./contract.ts";
import { createSlicer, type SlicePause } from "./yield-slices.ts";

/** Records one filtered listing may read before answering a short page with a cursor. */
export const FILTER_SCAN_BUDGET = 10_000;

/**
 * One page of events matching `query` (including `query.filter`), newest first. When a filter
 * is evaluated in memory and the scan budget runs out first, the page may be short (even empty)
 * with a non-null `next`: continue from there.
 */
export async function listMatching(
  store: StoreDriver,
  query: EventQuery,
  budget: number = FILTER_SCAN_BUDGET,
  pause: SlicePause = createSlicer(),
): Promise<EventPage> {
  if (query.filter === undefined) return store.list(query);
  if (store.filterPushdown && translateFilterToSql(query.filter).exact) {
    return listInWindows(store, query, budget, pause);
  }
  const filter = createEventFilter(query.filter);
  const batch = Math.min(500, Math.max(query.limit + 1, 100));
  const found: EventRecord[] = [];
  let after = query.after;
  let scanned = 0;
  for (;;) {
    const page = await store.list({
      ...query,
      filter: store.filterPushdown ? query.filter : undefined,
      after,
      limit: batch,
    });
    for (let i = 0; i < page.events.length; i++) {
      // The event loop runs between slices of the evaluation (yield-slices.ts).
      if (i % 64 === 63) await pause();
      const record = page.events[i] as EventRecord;
      if (!filter.matchesRecord(record)) continue;
      if (found.length === query.limit) return { events: found, next: (found[found.length - 1] as EventRecord).seq };
      found.push(record);
    }
    scanned += page.events.length;
    await pause();
    if (page.next === null) return { events: found, next: null };
    after = page.next;
    if (scanned >= budget) return { events: found, next: after };
  }
}

/** Seqs one SQL statement looks at when an exact filter runs in SQL (one window of the log). */
export const SQL_WINDOW_SEQS = 2_000;

/**
 * An exact filter in SQL, one window of `SQL_WINDOW_SEQS` seqs per statement, newest first, with
 * the event loop free between windows: a filter matching nothing never makes one statement scan
 * the whole log. Past `budget` seqs the page may be short, with a cursor to continue from.
 */
async function listInWindows(
  store: StoreDriver,
  query: EventQuery,
  budget: number,
  pause: SlicePause,
): Promise<EventPage> {
  const found: EventRecord[] = [];
  let upper = query.after ?? (await store.lastSeq()) + 1;
  let scanned = 0;
  while (upper > 0) {
    const lower = Math.max(0, upper - SQL_WINDOW_SEQS);
    // Once the page is full, one more row (limit 1) tells whether a next page exists.
    const want = Math.max(1, query.limit - found.length);
    const page = await store.list({ ...query, after: upper, minSeq: lower, limit: want });
    if (found.length === query.limit) {
      if (page.events.length > 0) return { events: found, next: (found[found.length - 1] as EventRecord).seq };
    } else {
      found.push(...page.events);
      if (page.next !== null) return { events: found, next: (found[found.length - 1] as EventRecord).seq };
    }
    upper = lower;
    scanned += SQL_WINDOW_SEQS;
    if (upper > 0 && scanned >= budget) return { events: found, next: upper };
    await pause();
  }
  return { events: found, next: null };
}

/** Every event matching `query` (cursor and limit ignored), oldest last; for counts and bulk work. */
export async function* eachMatching(store: StoreDriver, query: Omit<EventQuery, "limit" | "after">) {
  const pause = createSlicer();
  let after: number | undefined;
  do {
    const page = await listMatching(store, { ...query, after, limit: 500 }, Number.POSITIVE_INFINITY, pause);
    await pause();
    yield* page.events;
    after = page.next ?? undefined;
  } while (after !== undefined);
}
