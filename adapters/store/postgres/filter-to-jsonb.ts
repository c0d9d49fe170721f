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
 * memory. Parameters are `?` placeholders (numbered by the caller).
 */
import type { CompareOp, FilterNode, FilterScalar } from "../../../src/filters/parse-filter.ts";

export interface JsonbFilterSql {
  sql: string;
  params: unknown[];
  exact: boolean;
}

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

class Translator {
  private aliases = 0;

  /** `element` on each element when `v` is an array, else `whole` (default `element`) on `v`. */
  private spread(
    v: string,
    element: (value: string, params: unknown[]) => string,
    whole?: (value: string, params: unknown[]) => string,
  ): JsonbFilterSql {
    const alias = `e${this.aliases++}`;
    const params: unknown[] = [];
    const inner = element(`${alias}.value`, params);
    const scalar = (whole ?? element)(v, params);
    return {
      sql: `(CASE WHEN ${typeOf(v)} = 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements(${v}) AS ${alias}(value) WHERE ${inner}) ELSE ${scalar} END)`,
      params,
      exact: true,
    };
  }

  private combine(op: "AND" | "OR", parts: JsonbFilterSql[]): JsonbFilterSql {
    return {
      sql: `(${parts.map((p) => p.sql).join(` ${op} `)})`,
      params: parts.flatMap((p) => p.params),
      exact: parts.every((p) => p.exact),
    };
  }

  node(node: FilterNode, v: string): JsonbFilterSql {
    switch (node.op) {
      case "and":
        return this.combine(
          "AND",
          node.nodes.map((n) => this.node(n, v)),
        );
      case "or":
        return this.combine(
          "OR",
          node.nodes.map((n) => this.node(n, v)),
        );
      case "not": {
        const inner = this.node(node.node, v);
        return inner.exact ? { sql: `(NOT ${inner.sql})`, params: inner.params, exact: true } : UNTRANSLATED;
      }
      case "exist":
        return { sql: `(${v} IS ${node.value ? "NOT " : ""}NULL)`, params: [], exact: true };
      case "field":
        if (node.key.includes("\u0000")) return UNTRANSLATED;
        return this.node(node.node, `(${v} -> ${literal(node.key)})`);
      case "object":
        return this.object(node.node, v);
      case "in":
      case "nin": {
        const anyOf = (value: string, params: unknown[]) =>
          `(${node.values.map((x) => equals(value, x, params)).join(" OR ")})`;
        if (node.op === "in") return this.spread(v, anyOf);
        return this.spread(
          v,
          (value, params) => `(coalesce(${typeOf(value)} IN ${SCALAR_TYPES}, false) AND NOT ${anyOf(value, params)})`,
        );
      }
      case "contains":
        if (typeof node.value !== "string") {
          const expected = node.value;
          return this.spread(
            v,
            (value, params) => compare("contains", value, expected, params),
            () => "false",
          );
        }
        return this.spread(v, (value, params) => compare("contains", value, node.value, params));
      default: {
        const { op, value: expected } = node;
        return this.spread(v, (value, params) => compare(op, value, expected, params));
      }
    }
  }

  /** An object filter on the value, or on each element when it is an array; the filter's SQL appears once. */
  private object(node: FilterNode, v: string): JsonbFilterSql {
    const alias = `o${this.aliases++}`;
    const inner = this.node(node, `${alias}.value`);
    const candidates =
      `SELECT value FROM jsonb_array_elements(CASE WHEN ${typeOf(v)} = 'array' THEN ${v} END)` +
      ` UNION ALL SELECT ${v} WHERE ${typeOf(v)} IS DISTINCT FROM 'array'`;
    return {
      sql: `EXISTS (SELECT 1 FROM (${candidates}) AS ${alias}(value) WHERE ${inner.sql})`,
      params: inner.params,
      exact: inner.exact,
    };
  }

  root(node: FilterNode, column: string): JsonbFilterSql {
    switch (node.op) {
      case "object":
        return this.root(node.node, column);
      case "and":
        return this.combine(
          "AND",
          node.nodes.map((n) => this.root(n, column)),
        );
      case "or":
        return this.combine(
          "OR",
          node.nodes.map((n) => this.root(n, column)),
        );
      case "not": {
        const inner = this.root(node.node, column);
        return inner.exact ? { sql: `(NOT ${inner.sql})`, params: inner.params, exact: true } : UNTRANSLATED;
      }
      case "field":
        if (node.key.includes("\u0000")) return UNTRANSLATED;
        return this.node(
          node.node,
          node.key === "headers" ? `(${column} -> 'headers')` : `(${column} -> 'event' -> ${literal(node.key)})`,
        );
      default:
        return { sql: "false", params: [], exact: true };
    }
  }
}

/** Translates a filter into a WHERE term over the JSONB `doc` column (`{ event, headers }`). */
export function translateFilterToJsonb(node: FilterNode, column = "doc"): JsonbFilterSql {
  const translation = new Translator().root(node, column);
  if (translation.sql.length > MAX_SQL_LENGTH) return UNTRANSLATED;
  return translation;
}
