/**
 * Lists events matching a content filter on any store driver: SQL drivers (`filterPushdown`)
 * answer an exactly translatable filter in one indexed query; otherwise pages of the driver's
 * own `list` (narrowed by the store where it can) are checked with the compiled predicate.
 * Both paths give the same events (test/filters/filter-sql.property.test.ts).
 */
import { createEventFilter } from "../filters/event-filter.ts";
import { translateFilterToSql } from "../filters/filter-to-sql.ts";
import type { EventPage, EventQuery, EventRecord, StoreDriver } from "./contract.ts";

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
): Promise<EventPage> {
  if (query.filter === undefined) return store.list(query);
  if (store.filterPushdown && translateFilterToSql(query.filter).exact) return store.list(query);
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
    for (const record of page.events) {
      if (!filter.matchesRecord(record)) continue;
      if (found.length === query.limit) return { events: found, next: (found[found.length - 1] as EventRecord).seq };
      found.push(record);
    }
    scanned += page.events.length;
    if (page.next === null) return { events: found, next: null };
    after = page.next;
    if (scanned >= budget) return { events: found, next: after };
  }
}

/** Every event matching `query` (cursor and limit ignored), oldest last; for counts and bulk work. */
export async function* eachMatching(store: StoreDriver, query: Omit<EventQuery, "limit" | "after">) {
  let after: number | undefined;
  do {
    const page = await listMatching(store, { ...query, after, limit: 500 }, Number.POSITIVE_INFINITY);
    yield* page.events;
    after = page.next ?? undefined;
  } while (after !== undefined);
}
