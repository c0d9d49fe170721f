/**
 * The filter language (docs/filters.md): parses a filter as users write it (JSON) into a small
 * tree, or names the exact path of every problem. The tree is what the predicate compiler
 * (compile-filter.ts) and the SQL translator (filter-to-sql.ts) read.
 */

/** A value a filter may compare with. */
export type FilterScalar = string | number | boolean | null;

/** Operators that compare the selected value with one operand. */
export type CompareOp = "eq" | "neq" | "gt" | "gte" | "lt" | "lte" | "startsWith" | "endsWith" | "contains";

/**
 * The parsed filter. `field` selects a key of the current value; `object` is an object filter
 * with fields, applied to the value or, on an array, to each element (one element must match
 * all of it). Comparisons on an array apply to each element.
 */
export type FilterNode =
  | { op: "object"; node: FilterNode }
  | { op: "and"; nodes: FilterNode[] }
  | { op: "or"; nodes: FilterNode[] }
  | { op: "not"; node: FilterNode }
  | { op: "field"; key: string; node: FilterNode }
  | { op: "exist"; value: boolean }
  | { op: "in" | "nin"; values: FilterScalar[] }
  | { op: CompareOp; value: FilterScalar };

/** One problem of a filter: the keys from the filter's root to the bad part. */
export interface FilterProblem {
  path: (string | number)[];
  message: string;
}

export type FilterParseResult = { ok: true; node: FilterNode } | { ok: false; problems: FilterProblem[] };

/** Bounds that keep a filter cheap to compile and to run. */
export const FILTER_LIMITS = {
  /** Nesting of objects and arrays. */
  maxDepth: 12,
  /** Operators and fields in one filter. */
  maxNodes: 256,
  /** Entries of `$in`, `$nin`, `$or`, `$and`, `all`, `any`. */
  maxArray: 100,
  /** Characters of a string operand. */
  maxString: 1024,
  /** Characters of a field name. */
  maxKey: 128,
} as const;

const COMPARE: Record<string, CompareOp> = {
  $eq: "eq",
  $neq: "neq",
  $gt: "gt",
  $gte: "gte",
  $lt: "lt",
  $lte: "lte",
  $startsWith: "startsWith",
  $endsWith: "endsWith",
  $contains: "contains",
};

/** Every operator name, for messages. */
export const OPERATORS = [...Object.keys(COMPARE), "$in", "$nin", "$exist", "$or", "$and", "$not"];

const OPERATOR_LIST = OPERATORS.join(" ");

/** Problems found so far and the size of the filter (shared with parse-dialect-filters.ts). */
export interface ParseState {
  problems: FilterProblem[];
  nodes: number;
}

/** A JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isScalar(value: unknown): value is FilterScalar {
  return (
    value === null ||
    typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value)) ||
    typeof value === "string"
  );
}

function checkScalar(value: unknown, path: (string | number)[], state: ParseState): value is FilterScalar {
  if (!isScalar(value)) {
    state.problems.push({ path, message: "a string, number, boolean or null" });
    return false;
  }
  if (typeof value === "string" && value.length > FILTER_LIMITS.maxString) {
    state.problems.push({ path, message: `a string of at most ${FILTER_LIMITS.maxString} characters` });
    return false;
  }
  return true;
}

/** A non-empty array within the size limit, or a problem. */
export function checkArray(
  value: unknown,
  path: (string | number)[],
  state: ParseState,
  what: string,
): value is unknown[] {
  if (!Array.isArray(value) || value.length === 0) {
    state.problems.push({ path, message: `a non-empty array of ${what}` });
    return false;
  }
  if (value.length > FILTER_LIMITS.maxArray) {
    state.problems.push({ path, message: `at most ${FILTER_LIMITS.maxArray} entries` });
    return false;
  }
  return true;
}

function operand(op: CompareOp, value: unknown, path: (string | number)[], state: ParseState): FilterNode | undefined {
  if (!checkScalar(value, path, state)) return undefined;
  const needsString = op === "startsWith" || op === "endsWith";
  const ordered = op === "gt" || op === "gte" || op === "lt" || op === "lte";
  if (needsString && typeof value !== "string") {
    state.problems.push({ path, message: "a string" });
    return undefined;
  }
  if (ordered && typeof value !== "string" && typeof value !== "number") {
    state.problems.push({ path, message: "a number or a string (no type coercion)" });
    return undefined;
  }
  return { op, value };
}

/** Parses one operator entry applied to the current value. */
function parseOperator(
  key: string,
  value: unknown,
  path: (string | number)[],
  depth: number,
  state: ParseState,
): FilterNode | undefined {
  const compare = COMPARE[key];
  if (compare) return operand(compare, value, path, state);
  switch (key) {
    case "$in":
    case "$nin": {
      if (!checkArray(value, path, state, "values")) return undefined;
      const values = value.filter((item, i) => checkScalar(item, [...path, i], state)) as FilterScalar[];
      return values.length === value.length ? { op: key === "$in" ? "in" : "nin", values } : undefined;
    }
    case "$exist":
      if (typeof value !== "boolean") {
        state.problems.push({ path, message: "true or false" });
        return undefined;
      }
      return { op: "exist", value } as FilterNode;
    case "$or":
    case "$and": {
      if (!checkArray(value, path, state, "filters")) return undefined;
      const nodes = value.map((item, i) => parseValue(item, [...path, i], depth + 1, state));
      return nodes.every((n) => n !== undefined) ? { op: key === "$or" ? "or" : "and", nodes } : undefined;
    }
    case "$not": {
      const node = parseValue(value, path, depth + 1, state);
      return node && ({ op: "not", node } as FilterNode);
    }
    default:
      state.problems.push({ path, message: `a known operator (${OPERATOR_LIST}); unknown operator ${key}` });
      return undefined;
  }
}

/** Parses a filter value: a scalar (equality) or an object of fields and operators (all apply). */
function parseValue(
  value: unknown,
  path: (string | number)[],
  depth: number,
  state: ParseState,
): FilterNode | undefined {
  state.nodes++;
  if (state.nodes > FILTER_LIMITS.maxNodes) {
    if (state.nodes === FILTER_LIMITS.maxNodes + 1) {
      state.problems.push({ path, message: `a filter of at most ${FILTER_LIMITS.maxNodes} fields and operators` });
    }
    return undefined;
  }
  if (depth > FILTER_LIMITS.maxDepth) {
    state.problems.push({ path, message: `a filter nested at most ${FILTER_LIMITS.maxDepth} levels deep` });
    return undefined;
  }
  if (Array.isArray(value)) {
    state.problems.push({ path, message: "a value or an object of operators (use $in for one of a list)" });
    return undefined;
  }
  if (!isPlainObject(value)) {
    return checkScalar(value, path, state) ? { op: "eq", value } : undefined;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) {
    state.problems.push({ path, message: "at least one field or operator" });
    return undefined;
  }
  const nodes: (FilterNode | undefined)[] = keys.map((key) => {
    const child = [...path, key];
    if (key.startsWith("$")) return parseOperator(key, value[key], child, depth, state);
    if (key.length > FILTER_LIMITS.maxKey) {
      state.problems.push({ path: child, message: `a field name of at most ${FILTER_LIMITS.maxKey} characters` });
      return undefined;
    }
    const node = parseValue(value[key], child, depth + 1, state);
    return node && { op: "field", key, node };
  });
  if (!nodes.every((n) => n !== undefined)) return undefined;
  const node: FilterNode = nodes.length === 1 ? (nodes[0] as FilterNode) : { op: "and", nodes };
  return keys.some((key) => !key.startsWith("$")) ? { op: "object", node } : node;
}

/** Operators that compare need a field: at the top level a filter selects attributes. */
function checkRoot(node: FilterNode, path: (string | number)[], state: ParseState): void {
  if (node.op === "and" || node.op === "or") {
    for (const n of node.nodes) checkRoot(n, path, state);
  } else if (node.op === "not" || node.op === "object") checkRoot(node.node, path, state);
  else if (node.op !== "field") {
    state.problems.push({ path, message: "an object of fields (type, source, subject, data, headers, ...)" });
  }
}

/** Parses a filter (`{"type": "agreement.completed", "data": {"amount": {"$gte": 100}}}`). */
export function parseFilter(value: unknown): FilterParseResult {
  const state: ParseState = { problems: [], nodes: 0 };
  if (!isPlainObject(value)) return { ok: false, problems: [{ path: [], message: "an object" }] };
  const node = parseValue(value, [], 0, state);
  if (node) checkRoot(node, [], state);
  return node && state.problems.length === 0 ? { ok: true, node } : { ok: false, problems: state.problems };
}

/** The shorthand `where: {"data.status": "x" | ["x", "y"]}` as a filter tree. */
export function whereToFilter(where: Record<string, FilterScalar | FilterScalar[]>): FilterNode | undefined {
  const nodes = Object.entries(where).map(([path, expected]) => {
    const leaf: FilterNode = Array.isArray(expected) ? { op: "in", values: expected } : { op: "eq", value: expected };
    return path
      .split(".")
      .reduceRight<FilterNode>((node, key) => ({ op: "object", node: { op: "field", key, node } }), leaf);
  });
  if (nodes.length === 0) return undefined;
  return nodes.length === 1 ? nodes[0] : { op: "and", nodes };
}

/** All of the given trees (undefined ones ignored); undefined when none. */
export function allOf(...nodes: (FilterNode | undefined)[]): FilterNode | undefined {
  const present = nodes.filter((n): n is FilterNode => n !== undefined);
  if (present.length === 0) return undefined;
  return present.length === 1 ? present[0] : { op: "and", nodes: present };
}
