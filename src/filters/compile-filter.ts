/**
 * Compiles a parsed filter into a predicate over the filter document (the CloudEvent's
 * attributes at the top level plus `headers`). Compiled once; a run allocates nothing.
 * The semantics written here are the reference the SQL translation (filter-to-sql.ts) matches.
 */
import type { CompareOp, FilterNode, FilterScalar } from "./parse-filter.ts";

/** What a filter is matched against: the CloudEvent as delivered and the received headers. */
export interface FilterDocument {
  event: object;
  /** Lower-case names, credentials redacted (as recorded). */
  headers: Readonly<Record<string, string>>;
}

/** A compiled filter. */
export type EventPredicate = (doc: FilterDocument) => boolean;

type Test = (value: unknown) => boolean;

/**
 * A reader of one key of a JSON object. Own properties only: a filter on `constructor` or
 * `__proto__` must not reach the prototype; other names cannot be inherited by parsed JSON, so
 * they skip the `hasOwn` check (the hot path).
 */
function readerOf(key: string): (value: unknown) => unknown {
  if (key in Object.prototype) {
    return (value) =>
      value !== null && typeof value === "object" && !Array.isArray(value) && Object.hasOwn(value, key)
        ? (value as Record<string, unknown>)[key]
        : undefined;
  }
  return (value) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)[key]
      : undefined;
}

/**
 * Strings order by code point (as UTF-8 bytes do in SQLite), not by UTF-16 code unit; a lone
 * surrogate counts as its own code point (U+D800..U+DFFF, where SQLite's JSON decoding puts it).
 * The two orders differ only at the first difference, where the code points are compared.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x - y;
    // Inside a pair that began one unit before (the same high surrogate in both): compare from it.
    const at = i > 0 && isHighSurrogate(a.charCodeAt(i - 1)) && (isLowSurrogate(x) || isLowSurrogate(y)) ? i - 1 : i;
    return (a.codePointAt(at) as number) - (b.codePointAt(at) as number);
  }
  return a.length - b.length;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

function typeOf(value: unknown): string {
  return value === null ? "null" : typeof value;
}

function isScalar(value: unknown): boolean {
  const t = typeof value;
  return value === null || t === "string" || t === "number" || t === "boolean";
}

/** The test of one comparison on one (non-array) value. */
function compareTest(op: CompareOp, expected: FilterScalar): Test {
  const type = typeOf(expected);
  switch (op) {
    case "eq":
      return (v) => v === expected;
    case "neq":
      return (v) => typeOf(v) === type && v !== expected;
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const ok =
        op === "gt"
          ? (c: number) => c > 0
          : op === "gte"
            ? (c: number) => c >= 0
            : op === "lt"
              ? (c: number) => c < 0
              : (c: number) => c <= 0;
      if (type === "number") {
        const n = expected as number;
        return (v) => typeof v === "number" && ok(v < n ? -1 : v > n ? 1 : 0);
      }
      const s = expected as string;
      // UTF-16 order equals code point order unless both strings have a unit >= 0xD800 at their
      // first difference: without such a unit in the operand, the native comparison is exact.
      if (!/[\uD800-\uFFFF]/.test(s)) return (v) => typeof v === "string" && ok(v < s ? -1 : v > s ? 1 : 0);
      return (v) => typeof v === "string" && ok(compareCodePoints(v, s));
    }
    case "startsWith":
      return (v) => typeof v === "string" && v.startsWith(expected as string);
    case "endsWith":
      return (v) => typeof v === "string" && v.endsWith(expected as string);
    case "contains":
      // On a string: substring; as an array element (see compileNode): equality, or substring of a string element.
      if (type !== "string") return (v) => v === expected;
      return (v) => typeof v === "string" && v.includes(expected as string);
  }
}

/** A test that holds when every test holds (plain loops: this runs per event per route). */
function allOf<T>(tests: ((value: T) => boolean)[]): (value: T) => boolean {
  if (tests.length === 1) return tests[0] as (value: T) => boolean;
  if (tests.length === 2) {
    const [a, b] = tests as [(value: T) => boolean, (value: T) => boolean];
    return (v) => a(v) && b(v);
  }
  return (v) => {
    for (let i = 0; i < tests.length; i++) if (!(tests[i] as (value: T) => boolean)(v)) return false;
    return true;
  };
}

/** A test that holds when some test holds. */
function anyOf<T>(tests: ((value: T) => boolean)[]): (value: T) => boolean {
  if (tests.length === 1) return tests[0] as (value: T) => boolean;
  return (v) => {
    for (let i = 0; i < tests.length; i++) if ((tests[i] as (value: T) => boolean)(v)) return true;
    return false;
  };
}

/** Applies a value test to the value, or to any element when the value is an array. */
function anyElement(test: Test): Test {
  return (v) => {
    if (!Array.isArray(v)) return test(v);
    for (let i = 0; i < v.length; i++) if (test(v[i])) return true;
    return false;
  };
}

/** Compiles a node to a test of the current value. */
function compileNode(node: FilterNode): Test {
  switch (node.op) {
    case "and":
      return allOf(node.nodes.map(compileNode));
    case "or":
      return anyOf(node.nodes.map(compileNode));
    case "not": {
      const test = compileNode(node.node);
      return (v) => !test(v);
    }
    case "object":
      return anyElement(compileNode(node.node));
    case "field": {
      const read = readerOf(node.key);
      const test = compileNode(node.node);
      return (v) => test(read(v));
    }
    case "exist":
      return node.value ? (v) => v !== undefined : (v) => v === undefined;
    case "in": {
      const set = new Set<unknown>(node.values);
      return anyElement((v) => set.has(v));
    }
    case "nin": {
      const set = new Set<unknown>(node.values);
      return anyElement((v) => isScalar(v) && !set.has(v));
    }
    case "contains": {
      const element = compareTest("contains", node.value);
      const inString = typeof node.value === "string" ? element : () => false;
      return (v) => (Array.isArray(v) ? v.some(element) : inString(v));
    }
    default:
      return anyElement(compareTest(node.op, node.value));
  }
}

/** The test at the top level: a field reads an attribute of the event, or `headers`. */
function compileRoot(node: FilterNode): EventPredicate {
  switch (node.op) {
    case "object":
      return compileRoot(node.node);
    case "and":
      return allOf(node.nodes.map(compileRoot));
    case "or":
      return anyOf(node.nodes.map(compileRoot));
    case "not": {
      const test = compileRoot(node.node);
      return (doc) => !test(doc);
    }
    case "field": {
      const test = compileNode(node.node);
      if (node.key === "headers") return (doc) => test(doc.headers);
      const read = readerOf(node.key);
      return (doc) => test(read(doc.event));
    }
    default:
      // parseFilter refuses operators at the top level; a document is never equal to a scalar.
      return () => false;
  }
}

/** Compiles a parsed filter (parse-filter.ts) into a predicate over filter documents. */
export function compileFilter(node: FilterNode): EventPredicate {
  return compileRoot(node);
}
