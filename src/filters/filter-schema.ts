/**
 * valibot schemas of the filter language for config files and API bodies: a `filter` object
 * and a `filters` array of CloudEvents Subscriptions dialect expressions. Every problem is an
 * issue whose path reaches the bad part (`routes.3.filter.data.amount.$gtx`). The output is the
 * filter as written; compile it with `parseEventFilter` (event-filter.ts).
 */

import * as v from "valibot";
import { parseBoundedJson } from "../encoding/json-depth.ts";
import { parseDialectFilters } from "./parse-dialect-filters.ts";
import { type FilterParseResult, parseFilter } from "./parse-filter.ts";

/** Builds a valibot issue path from keys under `root`. */
function pathOf(root: unknown, keys: (string | number)[]): [v.IssuePathItem, ...v.IssuePathItem[]] | undefined {
  const items: v.IssuePathItem[] = [];
  let input: unknown = root;
  for (const key of keys) {
    const value = input !== null && typeof input === "object" ? (input as Record<string, unknown>)[key] : undefined;
    items.push({ type: "object", origin: "value", input, key: String(key), value } as v.IssuePathItem);
    input = value;
  }
  return items.length > 0 ? (items as [v.IssuePathItem, ...v.IssuePathItem[]]) : undefined;
}

function checked(parse: (value: unknown) => FilterParseResult) {
  return v.rawCheck<unknown>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const result = parse(dataset.value);
    if (result.ok) return;
    for (const problem of result.problems) {
      addIssue({ message: problem.message, path: pathOf(dataset.value, problem.path) });
    }
  });
}

/** A filter object (`{"data": {"amount": {"$gte": 100}}}`), as written. */
export const FilterSchema = v.pipe(
  v.unknown(),
  checked(parseFilter),
  v.transform((value) => value as Record<string, unknown>),
);

/** A `filters` array of dialect expressions (`[{"prefix": {"type": "agreement."}}]`), as written. */
export const DialectFiltersSchema = v.pipe(
  v.unknown(),
  checked(parseDialectFilters),
  v.transform((value) => value as Record<string, unknown>[]),
);

/** A filter given as URL-encoded JSON in a query parameter (`?filter=%7B...%7D`). */
export const FilterParamSchema = v.pipe(
  v.string(),
  v.maxLength(16_384, "a filter of at most 16384 characters"),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return parseBoundedJson(dataset.value);
    } catch {
      addIssue({ message: "a filter as JSON (URL-encoded)" });
      return NEVER;
    }
  }),
  checked(parseFilter),
  v.transform((value) => value as Record<string, unknown>),
);
