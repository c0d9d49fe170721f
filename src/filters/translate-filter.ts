/**
 * The walk of a parsed filter into a SQL boolean expression, written once for every SQL
 * dialect: how `and` / `or` / `not` combine, when a part stays a superset (`exact: false`, the
 * caller finishes in memory), how a field leads down a path, how a test reaches every element
 * of an array (one level, as in memory) and how an object filter tries each element. A dialect
 * supplies only its spelling of the leaves: paths, JSON types, comparisons
 * (SQLite: filter-to-sql.ts; PostgreSQL JSONB: adapters/store/postgres/filter-to-jsonb.ts).
 * The semantics are those of compile-filter.ts; docs/filters.md states them.
 */
import type { CompareOp, FilterNode, FilterScalar } from "./parse-filter.ts";

/** A translated filter: `sql` selects a superset of the matches, exactly them when `exact`. */
export interface FilterTranslation {
  sql: string;
  params: unknown[];
  exact: boolean;
}

/**
 * One SQL dialect's leaves. `At` is where a value sits (a path into the stored document), `Value`
 * how a leaf test reads one value (the value and, where the dialect needs it apart, its type).
 * Every test it returns is two-valued (never NULL), so `NOT` stays exact.
 */
export interface FilterDialect<At, Value> {
  /** True in this dialect (an untranslated part: everything passes). */
  readonly always: string;
  /** False in this dialect (a top-level test that names no field). */
  readonly never: string;
  /** Whether a node can be compared in SQL at all (default: always). */
  pushable?(node: FilterNode): boolean;
  /** Whether a field name can be spelled in a path. */
  pushableKey(key: string): boolean;
  /** Where a top-level field sits in `column` (`headers`, or an attribute of the event). */
  rootField(column: string, key: string): At;
  /** Where field `key` of the value at `at` sits. */
  child(at: At, key: string): At;
  /** Whether the value at `at` is there (`present`) or not. */
  exist(at: At, present: boolean): string;
  /** How a leaf reads the value at `at` itself, and an array element named `alias`. */
  valueAt(at: At): Value;
  elementOf(alias: string): Value;
  /** `inner` (the test of element `alias`) over the elements when the value at `at` is an array, else `whole`. */
  spread(at: At, alias: string, inner: string, whole: string): string;
  /** Where an object filter's candidate named `alias` (below `at`) sits, and the test that one candidate passes `inner`. */
  candidateOf(at: At, alias: string): At;
  object(at: At, alias: string, inner: string): string;
  /** Equality of a value with one scalar. */
  equals(value: Value, expected: FilterScalar, params: unknown[]): string;
  /** One comparison of a (non-array) value. */
  compare(op: CompareOp, value: Value, expected: FilterScalar, params: unknown[]): string;
  /** A scalar value (not an object or array) for which `anyOf` does not hold (`nin`). */
  scalarNotAnyOf(value: Value, anyOf: string): string;
}

/** Translates `node` over the document in `column` with `dialect`'s leaves. */
export function translateFilter<At, Value>(
  node: FilterNode,
  column: string,
  dialect: FilterDialect<At, Value>,
): FilterTranslation {
  const untranslated: FilterTranslation = { sql: dialect.always, params: [], exact: false };
  let aliases = 0;

  const combine = (op: "AND" | "OR", parts: FilterTranslation[]): FilterTranslation => ({
    // A superset inside OR keeps the whole a superset; inside AND as well.
    sql: `(${parts.map((p) => p.sql).join(` ${op} `)})`,
    params: parts.flatMap((p) => p.params),
    exact: parts.every((p) => p.exact),
  });
  const negate = (inner: FilterTranslation): FilterTranslation =>
    inner.exact ? { sql: `(NOT ${inner.sql})`, params: inner.params, exact: true } : untranslated;

  /** A test of the value at `at`, or of any of its elements when it is an array. */
  const spread = (
    at: At,
    element: (value: Value, params: unknown[]) => string,
    whole: (value: Value, params: unknown[]) => string = element,
  ): FilterTranslation => {
    const alias = `j${aliases++}`;
    const params: unknown[] = [];
    const inner = element(dialect.elementOf(alias), params);
    const scalar = whole(dialect.valueAt(at), params);
    return { sql: dialect.spread(at, alias, inner, scalar), params, exact: true };
  };

  /** `node` applied to the value at `at`. */
  const walk = (node: FilterNode, at: At): FilterTranslation => {
    if (dialect.pushable && !dialect.pushable(node)) return untranslated;
    switch (node.op) {
      case "and":
        return combine(
          "AND",
          node.nodes.map((n) => walk(n, at)),
        );
      case "or":
        return combine(
          "OR",
          node.nodes.map((n) => walk(n, at)),
        );
      case "not":
        return negate(walk(node.node, at));
      case "exist":
        return { sql: dialect.exist(at, node.value), params: [], exact: true };
      case "field":
        if (!dialect.pushableKey(node.key)) return untranslated;
        return walk(node.node, dialect.child(at, node.key));
      case "object": {
        // The candidates (the elements, or the value itself) are one subquery, so the filter's
        // SQL appears once however deep objects nest.
        const alias = `o${aliases++}`;
        const inner = walk(node.node, dialect.candidateOf(at, alias));
        return { sql: dialect.object(at, alias, inner.sql), params: inner.params, exact: inner.exact };
      }
      case "in":
      case "nin": {
        const anyOf = (value: Value, params: unknown[]) =>
          `(${node.values.map((x) => dialect.equals(value, x, params)).join(" OR ")})`;
        if (node.op === "in") return spread(at, anyOf);
        return spread(at, (value, params) => dialect.scalarNotAnyOf(value, anyOf(value, params)));
      }
      case "contains": {
        const expected = node.value;
        const element = (value: Value, params: unknown[]) => dialect.compare("contains", value, expected, params);
        // A non-string `contains` is membership: it tests the elements of an array only.
        return typeof expected === "string" ? spread(at, element) : spread(at, element, () => dialect.never);
      }
      default: {
        const { op, value: expected } = node;
        return spread(at, (value, params) => dialect.compare(op, value, expected, params));
      }
    }
  };

  /** The top level: a field is an attribute of the event, or `headers`. */
  const root = (node: FilterNode): FilterTranslation => {
    switch (node.op) {
      case "object":
        return root(node.node);
      case "and":
        return combine("AND", node.nodes.map(root));
      case "or":
        return combine("OR", node.nodes.map(root));
      case "not":
        return negate(root(node.node));
      case "field":
        if (!dialect.pushableKey(node.key)) return untranslated;
        return walk(node.node, dialect.rootField(column, node.key));
      default:
        return { sql: dialect.never, params: [], exact: true };
    }
  };

  return root(node);
}
