/**
 * The CloudEvents Subscriptions API filter dialects (`exact`, `prefix`, `suffix`, `all`, `any`,
 * `not`) of a `filters` array, parsed into the same tree as the filter language (parse-filter.ts).
 * CESQL is not supported.
 */
import {
  checkArray,
  FILTER_LIMITS,
  type FilterNode,
  type FilterParseResult,
  isPlainObject,
  type ParseState,
} from "./parse-filter.ts";

const ATTRIBUTE = /^[a-z0-9]{1,20}$/;

/** One CloudEvents Subscriptions dialect expression (`exact`, `prefix`, `suffix`, `all`, `any`, `not`). */
function parseDialect(
  value: unknown,
  path: (string | number)[],
  depth: number,
  state: ParseState,
): FilterNode | undefined {
  state.nodes++;
  if (depth > FILTER_LIMITS.maxDepth || state.nodes > FILTER_LIMITS.maxNodes) {
    state.problems.push({ path, message: "a smaller filter (nesting or size limit)" });
    return undefined;
  }
  const keys = isPlainObject(value) ? Object.keys(value) : [];
  if (!isPlainObject(value) || keys.length !== 1) {
    state.problems.push({ path, message: "an object with exactly one of exact, prefix, suffix, all, any, not" });
    return undefined;
  }
  const dialect = keys[0] as string;
  const body = value[dialect];
  const at = [...path, dialect];
  if (dialect === "exact" || dialect === "prefix" || dialect === "suffix") {
    const entries = isPlainObject(body) ? Object.entries(body) : [];
    const [entry] = entries;
    if (!entry || entries.length !== 1) {
      state.problems.push({ path: at, message: "an object with exactly one attribute" });
      return undefined;
    }
    const [attribute, expected] = entry;
    if (!ATTRIBUTE.test(attribute)) {
      state.problems.push({ path: [...at, attribute], message: "a CloudEvents attribute name" });
      return undefined;
    }
    if (typeof expected !== "string" || expected.length > FILTER_LIMITS.maxString) {
      state.problems.push({ path: [...at, attribute], message: "a string" });
      return undefined;
    }
    const op = dialect === "exact" ? "eq" : dialect === "prefix" ? "startsWith" : "endsWith";
    return { op: "field", key: attribute, node: { op, value: expected } } as FilterNode;
  }
  if (dialect === "all" || dialect === "any") {
    if (!checkArray(body, at, state, "filter expressions")) return undefined;
    const nodes = body.map((item, i) => parseDialect(item, [...at, i], depth + 1, state));
    return nodes.every((n) => n !== undefined)
      ? ({ op: dialect === "all" ? "and" : "or", nodes } as FilterNode)
      : undefined;
  }
  if (dialect === "not") {
    const node = parseDialect(body, at, depth + 1, state);
    return node && ({ op: "not", node } as FilterNode);
  }
  state.problems.push({ path: at, message: "a filter dialect: exact, prefix, suffix, all, any or not" });
  return undefined;
}

/** Parses a `filters` array of CloudEvents Subscriptions dialect expressions; every entry must match. */
export function parseDialectFilters(value: unknown): FilterParseResult {
  const state: ParseState = { problems: [], nodes: 0 };
  if (!checkArray(value, [], state, "filter expressions")) return { ok: false, problems: state.problems };
  const nodes = value.map((item, i) => parseDialect(item, [i], 1, state));
  if (state.problems.length > 0 || !nodes.every((n) => n !== undefined)) return { ok: false, problems: state.problems };
  return { ok: true, node: nodes.length === 1 ? (nodes[0] as FilterNode) : { op: "and", nodes } };
}
