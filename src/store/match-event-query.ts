/**
 * Filtering shared by drivers that keep an index in memory (the memory store, the import of the
 * removed journal store): the semantics of every `EventQuery` field live here once, applied to a
 * small summary of each event so that drivers need not hold whole records in memory to answer a
 * query.
 *
 * Where an event's external id sits in its body is for its service to say (`searchFields`): a
 * driver is handed the gateway's services (`StoreWiring`, contract.ts) and summarizes with
 * `createEventSummarizer(services)`; nothing here reaches for the built-in registry.
 */
import type { SearchField, ServiceRegistry } from "../services/service-contract.ts";
import type { EventQuery, EventRecord } from "./contract.ts";

/** What a query can filter on, per event. */
export interface EventSummary {
  seq: number;
  id: string;
  sourceId: string;
  type: string;
  subject: string | undefined;
  externalId: string | undefined;
  receivedAt: number;
}

/** Compiles an event-type glob (`agreement.*`, `*`, `candidate.accepted`) to a predicate. */
export function compileTypePattern(pattern: string): (type: string) => boolean {
  if (pattern === "*") return () => true;
  if (!pattern.includes("*")) return (type) => type === pattern;
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const regex = new RegExp(`^${source}$`);
  return (type) => regex.test(type);
}

type FieldReader = (body: unknown) => string | undefined;

/** Reads the first string at one of `paths` (dot paths, own properties only). */
function compileFieldReader(paths: readonly string[]): FieldReader {
  const keyLists = paths.map((path) => path.split("."));
  return (body) => {
    for (const keys of keyLists) {
      let current = body;
      for (const key of keys) {
        current =
          current !== null && typeof current === "object" && Object.hasOwn(current, key)
            ? (current as Record<string, unknown>)[key]
            : undefined;
      }
      if (typeof current === "string") return current;
    }
    return undefined;
  };
}

/** Each service's reader of one search field, as the service declares it (`searchFields`). */
function readersOf(services: ServiceRegistry, field: SearchField): ReadonlyMap<string, FieldReader> {
  const readers = new Map<string, FieldReader>();
  for (const [name, service] of services) {
    const paths = service.searchFields?.[field];
    if (paths) readers.set(name, compileFieldReader(paths));
  }
  return readers;
}

/** The summary of a record, as a driver indexes it. */
export type SummarizeEvent = (record: EventRecord) => EventSummary;

/**
 * The summarizer of a driver handed `services`: the external id an event carries is read where
 * its service says (`searchFields.externalId`). Without services no event has an external id
 * (an `externalId` query then matches nothing).
 */
export function createEventSummarizer(services: ServiceRegistry | undefined): SummarizeEvent {
  const externalIdReaders = services ? readersOf(services, "externalId") : new Map<string, FieldReader>();
  return (record) => ({
    seq: record.seq,
    id: record.id,
    sourceId: record.sourceId,
    type: record.event.type,
    subject: record.event.subject,
    externalId: externalIdReaders.get(record.event.service)?.(record.event.data),
    receivedAt: record.receivedAt,
  });
}

/** Builds the predicate of a query (everything but cursor and limit). */
export function compileEventQuery(query: EventQuery): (summary: EventSummary) => boolean {
  const typeMatches = query.type ? compileTypePattern(query.type) : undefined;
  return (s) =>
    (query.sourceId === undefined || s.sourceId === query.sourceId) &&
    (typeMatches === undefined || typeMatches(s.type)) &&
    (query.subject === undefined || s.subject === query.subject) &&
    (query.externalId === undefined || s.externalId === query.externalId) &&
    (query.from === undefined || s.receivedAt >= query.from) &&
    (query.to === undefined || s.receivedAt < query.to);
}

/**
 * One page of summaries held in ascending seq order, newest first. `after` is the seq of the
 * last summary of the previous page; `next` is set when more matches may follow.
 */
export function pageSummaries<T extends EventSummary>(ascending: readonly T[], query: EventQuery) {
  const matches = compileEventQuery(query);
  const page: T[] = [];
  let i = ascending.length - 1;
  if (query.after !== undefined) {
    let lo = 0;
    let hi = ascending.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ascending[mid] as T).seq < query.after) lo = mid + 1;
      else hi = mid;
    }
    i = lo - 1;
  }
  for (; i >= 0; i--) {
    const summary = ascending[i] as T;
    if (!matches(summary)) continue;
    if (page.length === query.limit) return { page, next: (page[page.length - 1] as T).seq };
    page.push(summary);
  }
  return { page, next: null as number | null };
}

/** Summaries with seq > `afterSeq`, ascending, matching `filter`, at most `limit`. */
export function summariesAfter<T extends EventSummary>(
  ascending: readonly T[],
  afterSeq: number,
  limit: number,
  filter: Omit<EventQuery, "after" | "limit"> = {},
): T[] {
  const matches = compileEventQuery({ ...filter, limit });
  let lo = 0;
  let hi = ascending.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((ascending[mid] as T).seq <= afterSeq) lo = mid + 1;
    else hi = mid;
  }
  const out: T[] = [];
  for (let i = lo; i < ascending.length && out.length < limit; i++) {
    const summary = ascending[i] as T;
    if (matches(summary)) out.push(summary);
  }
  return out;
}
