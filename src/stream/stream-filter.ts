/**
 * Subscriber filters of the live stream: source ids, event types and subjects, each a list of
 * patterns in which `*` matches any run of characters (`agreement.*`, `agreements/*`). A filter
 * matches an event when every dimension it names has a matching pattern; an absent dimension
 * matches everything; a content `filter` (docs/filters.md) applies as well. Also decides whether one pattern is contained in another, which is how a
 * requested filter is checked against a subscriber's scope.
 */
import * as v from "valibot";
import { parseEventFilter } from "../filters/event-filter.ts";
import { FilterSchema } from "../filters/filter-schema.ts";
import type { EventQuery, EventRecord } from "../store/contract.ts";
import { compileTypePattern } from "../store/match-event-query.ts";

export const MAX_PATTERNS = 32;

/** One pattern: 1..200 visible ASCII characters, `*` as wildcard. */
export const PatternSchema = v.pipe(
  v.string(),
  v.regex(/^[\x21-\x7e]{1,200}$/, "a pattern of 1..200 visible ASCII characters (`*` matches any run)"),
);

const patternList = v.pipe(
  v.union([PatternSchema, v.array(PatternSchema)]),
  v.transform((value) => (Array.isArray(value) ? value : [value])),
  v.maxLength(MAX_PATTERNS, `at most ${MAX_PATTERNS} patterns`),
);

/** A filter as subscribers write it: each field one pattern or a list, plus a content `filter`. */
export const StreamFilterSchema = v.strictObject({
  source: v.optional(patternList),
  type: v.optional(patternList),
  subject: v.optional(patternList),
  /** A content filter of the filter language (docs/filters.md). */
  filter: v.optional(FilterSchema),
});

export type StreamFilter = v.InferOutput<typeof StreamFilterSchema>;
export type FilterDimension = "source" | "type" | "subject";
export const FILTER_DIMENSIONS: readonly FilterDimension[] = ["source", "type", "subject"];

/** The value of one dimension of a recorded event. */
export function dimensionValue(record: EventRecord, dimension: FilterDimension): string | undefined {
  if (dimension === "source") return record.sourceId;
  if (dimension === "type") return record.event.type;
  return record.event.subject;
}

/** Compiles a filter into a predicate over recorded events. */
export function compileStreamFilter(filter: StreamFilter): (record: EventRecord) => boolean {
  if (isUnfiltered(filter)) return matchesEverything;
  const checks = FILTER_DIMENSIONS.flatMap((dimension) => {
    const patterns = filter[dimension];
    if (!patterns) return [];
    const compiled = patterns.map(compileTypePattern);
    return [
      (record: EventRecord) => {
        const value = dimensionValue(record, dimension);
        return value !== undefined && compiled.some((matches) => matches(value));
      },
    ];
  });
  const content = filter.filter === undefined ? undefined : parseEventFilter({ filter: filter.filter });
  if (content?.ok && content.filter) checks.push(content.filter.matchesRecord);
  if (checks.length === 0) return matchesEverything;
  return (record) => checks.every((check) => check(record));
}

/**
 * The matcher of a filter that restricts nothing, shared: every idle subscriber without filters
 * would otherwise keep a closure (and its scope) of its own.
 */
export function matchesEverything(_record: EventRecord): boolean {
  return true;
}

function isUnfiltered(filter: StreamFilter): boolean {
  for (const dimension of FILTER_DIMENSIONS) if (filter[dimension]) return false;
  return filter.filter === undefined;
}

/**
 * The store query that narrows an event log read for one filter (a superset of its matches): an
 * exact source or subject, one type pattern (the store's type globs mean the same as ours).
 */
export function journalHintOf(filter: StreamFilter): Omit<EventQuery, "after" | "limit"> {
  const exact = (patterns: string[] | undefined) =>
    patterns?.length === 1 && !(patterns[0] as string).includes("*") ? patterns[0] : undefined;
  return {
    sourceId: exact(filter.source),
    type: filter.type?.length === 1 ? filter.type[0] : undefined,
    subject: exact(filter.subject),
  };
}

/**
 * True when every string `inner` matches is also matched by `outer`. Sound (never claims a
 * containment that does not hold): it asks whether `outer` matches the text of `inner` with each
 * of inner's `*` absorbed by one of outer's. That is what scope checks need: a false "no" only
 * refuses a filter, a false "yes" would leak events.
 */
export function isPatternWithin(inner: string, outer: string): boolean {
  const tokens = (pattern: string) => pattern.split(/(\*)/).filter((t) => t !== "");
  const a = tokens(inner);
  const b = tokens(outer);
  // Greedy-free backtracking over literal characters and wildcards, memoised on positions.
  const ca = a.flatMap((t) => (t === "*" ? ["*"] : [...t].map((c) => `=${c}`)));
  const cb = b.flatMap((t) => (t === "*" ? ["*"] : [...t].map((c) => `=${c}`)));
  const memo = new Map<number, boolean>();
  const walk = (i: number, j: number): boolean => {
    const key = i * (cb.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (j === cb.length) result = i === ca.length;
    else if (cb[j] === "*") result = walk(i, j + 1) || (i < ca.length && walk(i + 1, j));
    else result = i < ca.length && ca[i] === cb[j] && walk(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return walk(0, 0);
}
