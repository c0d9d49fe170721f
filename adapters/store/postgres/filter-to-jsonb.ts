/**
 * Translates a parsed filter (src/filters) into a PostgreSQL boolean expression over the `doc`
 * column of `events` (JSONB: `{ event, headers }`), the PostgreSQL counterpart of
 * src/filters/filter-to-sql.ts (SQLite's JSON functions have no PostgreSQL spelling). The
 * semantics are those of compile-filter.ts: no coercion (types are checked with
 * `jsonb_typeof`), arrays match on any element (one level), a missing field is SQL NULL and
 * every term is two-valued (`coalesce(..., false)`), so `NOT` stays exact. Strings compare in
 * the "C" collation, which in a UTF-8 database is code point order, as in memory. Casts sit
 * inside `CASE` so that a value of another type is never cast (PostgreSQL does not promise the
 * order of `AND` operands). Parts that cannot be expressed (a key with U+0000, a huge
 * expression) become `true` and the result is marked inexact: a superset the driver finishes in
 * memory. Parameters are `?` placeholders (numbered by the caller). The walk of the filter is
 * src/filters/translate-filter.ts (shared with SQLite); this file spells PostgreSQL's leaves.
 */
import type { CompareOp, FilterNode, FilterScalar } from "../../../src/filters/parse-filter.ts";
import { type FilterDialect, type FilterTranslation, translateFilter } from "../../../src/filters/translate-filter.ts";

export type JsonbFilterSql = FilterTranslation;

const MAX_SQL_LENGTH = 65_536;
const UNTRANSLATED: JsonbFilterSql = { sql: "true", params: [], exact: false };
const SCALAR_TYPES = "('null','boolean','number','string')";

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Tests of one value `v` (a jsonb expression, NULL when missing). */
const text = (v: string) => `(${v} #>> '{}')`;
const typeOf = (v: string) => `jsonb_typeof(${v})`;

function ifType(v: string, type: string, test: string): string {
  return `(CASE WHEN ${typeOf(v)} = '${type}' THEN ${test} ELSE false END)`;
}

function equals(v: string, expected: FilterScalar, params: unknown[]): string {
  if (expected === null) return `coalesce(${typeOf(v)} = 'null', false)`;
  if (typeof expected === "boolean") return `coalesce(${v} = '${expected}'::jsonb, false)`;
  params.push(typeof expected === "number" ? String(expected) : expected);
  return typeof expected === "string"
    ? ifType(v, "string", `${text(v)} = ?::text`)
    : ifType(v, "number", `(${v})::numeric = ?::numeric`);
}

function compare(op: CompareOp, v: string, expected: FilterScalar, params: unknown[]): string {
  switch (op) {
    case "eq":
      return equals(v, expected, params);
    case "neq":
      if (expected === null) return "false";
      if (typeof expected === "boolean") return `coalesce(${v} = '${!expected}'::jsonb, false)`;
      params.push(typeof expected === "number" ? String(expected) : expected);
      return typeof expected === "string"
        ? ifType(v, "string", `${text(v)} <> ?::text`)
        : ifType(v, "number", `(${v})::numeric <> ?::numeric`);
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const sign = { gt: ">", gte: ">=", lt: "<", lte: "<=" }[op];
      params.push(typeof expected === "number" ? String(expected) : expected);
      return typeof expected === "string"
        ? ifType(v, "string", `${text(v)} COLLATE "C" ${sign} ?::text COLLATE "C"`)
        : ifType(v, "number", `(${v})::numeric ${sign} ?::numeric`);
    }
    case "startsWith":
    case "endsWith": {
      const s = expected as string;
      if (s === "") return `coalesce(${typeOf(v)} = 'string', false)`;
      params.push(s);
      const n = codePointLength(s);
      return ifType(v, "string", `${op === "startsWith" ? "left" : "right"}(${text(v)}, ${n}) = ?::text`);
    }
    case "contains":
      if (typeof expected !== "string") return equals(v, expected, params);
      if (expected === "") return `coalesce(${typeOf(v)} = 'string', false)`;
      params.push(expected);
      return ifType(v, "string", `strpos(${text(v)}, ?::text) > 0`);
  }
}

/** A place and a value are both a jsonb expression (SQL NULL when missing). */
const jsonbDialect: FilterDialect<string, string> = {
  always: "true",
  never: "false",
  pushableKey: (key) => !key.includes("\u0000"),
  rootField: (column, key) =>
    key === "headers" ? `(${column} -> 'headers')` : `(${column} -> 'event' -> ${literal(key)})`,
  child: (v, key) => `(${v} -> ${literal(key)})`,
  exist: (v, present) => `(${v} IS ${present ? "NOT " : ""}NULL)`,
  valueAt: (v) => v,
  elementOf: (alias) => `${alias}.value`,
  spread: (v, alias, inner, whole) =>
    `(CASE WHEN ${typeOf(v)} = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(${v}) AS ${alias}(value) WHERE ${inner}) ELSE ${whole} END)`,
  candidateOf: (_v, alias) => `${alias}.value`,
  object: (v, alias, inner) => {
    const candidates =
      `SELECT value FROM jsonb_array_elements(CASE WHEN ${typeOf(v)} = 'array' THEN ${v} END)` +
      ` UNION ALL SELECT ${v} WHERE ${typeOf(v)} IS DISTINCT FROM 'array'`;
    return `EXISTS (SELECT 1 FROM (${candidates}) AS ${alias}(value) WHERE ${inner})`;
  },
  equals,
  compare,
  scalarNotAnyOf: (value, anyOf) => `(coalesce(${typeOf(value)} IN ${SCALAR_TYPES}, false) AND NOT ${anyOf})`,
};

/** Translates a filter into a WHERE term over the JSONB `doc` column (`{ event, headers }`). */
export function translateFilterToJsonb(node: FilterNode, column = "doc"): JsonbFilterSql {
  const translation = translateFilter(node, column, jsonbDialect);
  if (translation.sql.length > MAX_SQL_LENGTH) return UNTRANSLATED;
  return translation;
}
