/**
 * Translates a parsed filter into a SQLite boolean expression over the `record` column of
 * `events` (the record as JSON: `event` and `headers`), with `json_type` / `json_extract` /
 * `json_each`. The semantics are those of compile-filter.ts, exactly: no coercion (types are
 * checked with `json_type`), arrays match on any element (one level, as in memory), a missing
 * field is never NULL-ish (every term is 0 or 1, so `NOT` stays two-valued). Parts that cannot
 * be expressed (field names with `"` or `\`, very large expressions) become `1` and the result
 * is marked inexact: a superset the caller finishes in memory. The walk of the filter is
 * translate-filter.ts (shared with PostgreSQL); this file spells SQLite's leaves.
 */
import type { CompareOp, FilterNode, FilterScalar } from "./parse-filter.ts";
import { type FilterDialect, type FilterTranslation, translateFilter } from "./translate-filter.ts";

/** A translated filter: `sql` selects a superset of the matches, exactly them when `exact`. */
export type FilterSql = FilterTranslation;

/** Past this length a translation is dropped (evaluated in memory instead). */
const MAX_SQL_LENGTH = 32_768;
/**
 * Past this many bound parameters, likewise: a Durable Object's SQLite takes at most 100 per
 * statement, and the rest of the query (source, type, times, cursor, limit) needs a few.
 */
const MAX_PARAMS = 90;

/** Where a value sits: a JSON text expression and a SQL expression of a JSON path within it. */
interface Location {
  json: string;
  path: string;
}

const PUSHABLE_KEY = /^[^"\\\u0000-\u001f]*$/;
const SCALAR_TYPES = "('null','true','false','integer','real','text')";

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** The path of `key` below `path` (a literal stays a literal; a `json_each` fullkey is concatenated). */
function childPath(path: string, key: string): string {
  const step = `."${key}"`;
  return path.startsWith("'")
    ? literal(`${path.slice(1, -1).replace(/''/g, "'")}${step}`)
    : `(${path} || ${literal(step)})`;
}

function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Equality with one scalar of a value whose SQL value and JSON type are given. */
function equals(value: string, type: string, expected: FilterScalar, params: unknown[]): string {
  if (expected === null) return `${type} = 'null'`;
  if (expected === true) return `${type} = 'true'`;
  if (expected === false) return `${type} = 'false'`;
  params.push(expected);
  return typeof expected === "string"
    ? `(${type} = 'text' AND ${value} = ?)`
    : `(${type} IN ('integer','real') AND ${value} = ?)`;
}

/** One comparison on one non-array value (`0` when it can never hold). */
function compare(op: CompareOp, value: string, type: string, expected: FilterScalar, params: unknown[]): string {
  switch (op) {
    case "eq":
      return equals(value, type, expected, params);
    case "neq":
      if (expected === null) return "0";
      if (typeof expected === "boolean") return `${type} = '${expected ? "false" : "true"}'`;
      params.push(expected);
      return typeof expected === "string"
        ? `(${type} = 'text' AND ${value} <> ?)`
        : `(${type} IN ('integer','real') AND ${value} <> ?)`;
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const sign = { gt: ">", gte: ">=", lt: "<", lte: "<=" }[op];
      params.push(expected);
      return typeof expected === "string"
        ? `(${type} = 'text' AND ${value} ${sign} ?)`
        : `(${type} IN ('integer','real') AND ${value} ${sign} ?)`;
    }
    case "startsWith":
    case "endsWith": {
      const s = expected as string;
      if (s === "") return `${type} = 'text'`;
      const n = codePointLength(s);
      params.push(s);
      return op === "startsWith"
        ? `(${type} = 'text' AND substr(${value}, 1, ${n}) = ?)`
        : `(${type} = 'text' AND substr(${value}, -${n}) = ?)`;
    }
    case "contains":
      if (typeof expected !== "string") return equals(value, type, expected, params);
      if (expected === "") return `${type} = 'text'`;
      params.push(expected);
      return `(${type} = 'text' AND instr(${value}, ?) > 0)`;
  }
}

// A UTF-16 unit of a surrogate pair that has no partner.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Does a comparison of `node` name a string with a lone surrogate? SQLite holds text as UTF-8, in
 * which such a string has no exact form (a bound parameter becomes U+FFFD, a JSON escape of one in
 * the stored record decodes to something else again), so it is compared in memory, where the
 * semantics are defined (docs/filters.md).
 */
function hasLoneSurrogate(node: FilterNode): boolean {
  switch (node.op) {
    case "in":
    case "nin":
      return node.values.some((value) => typeof value === "string" && LONE_SURROGATE.test(value));
    case "and":
    case "or":
    case "not":
    case "field":
    case "object":
    case "exist":
      return false;
    default:
      return typeof node.value === "string" && LONE_SURROGATE.test(node.value);
  }
}

/** How a SQLite leaf reads one value: its SQL value and its `json_type`. */
interface SqliteValue {
  value: string;
  type: string;
}

const sqliteDialect: FilterDialect<Location, SqliteValue> = {
  always: "1",
  never: "0",
  pushable: (node) => !hasLoneSurrogate(node),
  pushableKey: (key) => PUSHABLE_KEY.test(key),
  rootField: (column, key) => ({ json: column, path: literal(key === "headers" ? "$.headers" : `$.event."${key}"`) }),
  child: (at, key) => ({ json: at.json, path: childPath(at.path, key) }),
  exist: (at, present) => `(json_type(${at.json}, ${at.path}) IS ${present ? "NOT " : ""}NULL)`,
  valueAt: (at) => ({ value: `json_extract(${at.json}, ${at.path})`, type: `json_type(${at.json}, ${at.path})` }),
  elementOf: (alias) => ({ value: `${alias}.value`, type: `${alias}.type` }),
  spread: (at, alias, inner, whole) =>
    `(CASE json_type(${at.json}, ${at.path}) WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each(${at.json}, ${at.path}) AS ${alias} WHERE coalesce(${inner}, 0)) ELSE coalesce(${whole}, 0) END)`,
  candidateOf: (at, alias) => ({ json: at.json, path: `${alias}.p` }),
  object: (at, alias, inner) => {
    const candidates =
      `SELECT fullkey AS p FROM json_each(${at.json}, ${at.path}) WHERE json_type(${at.json}, ${at.path}) = 'array'` +
      ` UNION ALL SELECT ${at.path} AS p WHERE json_type(${at.json}, ${at.path}) IS NOT 'array'`;
    return `EXISTS (SELECT 1 FROM (${candidates}) AS ${alias} WHERE ${inner})`;
  },
  equals: ({ value, type }, expected, params) => equals(value, type, expected, params),
  compare: (op, { value, type }, expected, params) => compare(op, value, type, expected, params),
  scalarNotAnyOf: ({ type }, anyOf) => `(${type} IN ${SCALAR_TYPES} AND NOT coalesce(${anyOf}, 0))`,
};

/**
 * Translates a filter into a WHERE term over the JSON `record` column (the layout of
 * src/store/sql/event-sql.ts), for SQLite on Node and in a Durable Object alike.
 */
export function translateFilterToSql(node: FilterNode, column = "record"): FilterSql {
  const translation = translateFilter(node, column, sqliteDialect);
  if (translation.sql.length > MAX_SQL_LENGTH || translation.params.length > MAX_PARAMS) {
    return { sql: "1", params: [], exact: false };
  }
  return translation;
}
