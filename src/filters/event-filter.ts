/**
 * The public face of the filter language (docs/filters.md): parse and validate what a user wrote
 * (`filter` and/or the CloudEvents `filters` dialects), compile it once, and match recorded
 * events in memory or translate it for a SQL store. Routes, the live stream, the event log,
 * replay and erase all go through here.
 */
import { compileFilter, type EventPredicate, type FilterDocument } from "./compile-filter.ts";
import { type FilterSql, translateFilterToSql } from "./filter-to-sql.ts";
import { parseDialectFilters } from "./parse-dialect-filters.ts";
import { allOf, type FilterNode, type FilterProblem, parseFilter } from "./parse-filter.ts";

export type { FilterDocument, FilterNode, FilterProblem, FilterSql };

/** What the predicate reads of a recorded event (`EventRecord` of src/store/contract.ts). */
export type FilterableRecord = FilterDocument;

/** A compiled filter. */
export interface EventFilter {
  /** The parsed tree. */
  readonly node: FilterNode;
  /** The predicate over a filter document (event attributes plus `headers`). */
  readonly matches: EventPredicate;
  /** True when the recorded event matches. */
  matchesRecord(record: FilterableRecord): boolean;
  /** The SQL translation over the `record` column (computed on first use). */
  readonly sql: FilterSql;
}

/** What a user may write: a `filter` object and/or a `filters` array of dialect expressions. */
export interface FilterInput {
  filter?: unknown;
  filters?: unknown;
}

export type EventFilterResult =
  | { ok: true; filter: EventFilter | undefined }
  | { ok: false; problems: FilterProblem[] };

/** Compiles a parsed tree. */
export function createEventFilter(node: FilterNode): EventFilter {
  const matches = compileFilter(node);
  let sql: FilterSql | undefined;
  return {
    node,
    matches,
    matchesRecord: (record) => matches(record),
    get sql() {
      sql ??= translateFilterToSql(node);
      return sql;
    },
  };
}

/**
 * Parses and compiles `filter` and `filters` (both optional; all of them must match). Problems
 * carry paths that start with `filter` or `filters`.
 */
export function parseEventFilter(input: FilterInput, extra?: FilterNode): EventFilterResult {
  const problems: FilterProblem[] = [];
  const nodes: (FilterNode | undefined)[] = [extra];
  for (const key of ["filter", "filters"] as const) {
    if (input[key] === undefined) continue;
    const result = key === "filter" ? parseFilter(input[key]) : parseDialectFilters(input[key]);
    if (result.ok) nodes.push(result.node);
    else problems.push(...result.problems.map((p) => ({ path: [key, ...p.path], message: p.message })));
  }
  if (problems.length > 0) return { ok: false, problems };
  const node = allOf(...nodes);
  return { ok: true, filter: node && createEventFilter(node) };
}

/** The filter document of a recorded event (no copy: the predicate reads `event` and `headers`). */
export function filterDocumentOf(record: FilterableRecord): FilterDocument {
  return record;
}

/** Problems as the `details` of a 400 `invalid_request` answer: `[{ field, message }]`. */
export function toFilterDetails(problems: readonly FilterProblem[], prefix: (string | number)[] = []) {
  return problems.map((p) => ({ field: [...prefix, ...p.path].join("."), message: `expected ${p.message}` }));
}
