/**
 * Random filter documents and filters for the property tests of the SQL translations (SQLite:
 * filter-sql.property.test.ts; PostgreSQL JSONB: filter-jsonb.property.test.ts): nested objects,
 * arrays of scalars and of objects, every JSON type, awkward strings.
 */
import fc from "fast-check";
import type { GatewayEvent } from "../../src/events/envelope.ts";
import type { FilterNode, FilterScalar } from "../../src/filters/parse-filter.ts";
import type { EventRecord } from "../../src/store/contract.ts";

const KEYS = ["a", "b", "c", "n.m", "é"];
const baseText = fc.oneof(
  fc.constantFrom("", "a", "ab", "abc", "b", "ba", "A", "é", "日本", "😀", "a😀", "\uffff", "x'y", "5", "true", "null"),
  fc.string({ maxLength: 4, unit: fc.constantFrom("a", "b", "é", "😀", "'", "%", "_") }),
);
/** Lone surrogates (high and low, alone, doubled, reversed, beside a pair), U+FFFD and any UTF-16 unit. */
const loneSurrogateText = fc.oneof(
  fc.constantFrom(
    "\ud83d",
    "\ude00",
    "a\ud83d",
    "\ud83db",
    "\ud83d\ud83d",
    "\ude00\ud83d",
    "😀\ud83d",
    "\ufffd",
    "\ud7ff",
    "\ue000",
  ),
  fc.string({ maxLength: 4, unit: fc.constantFrom("a", "😀", "\ud83d", "\ude00", "\ufffd") }),
  fc.string({ maxLength: 3, unit: "binary" }),
);

const number = fc.oneof(
  fc.constantFrom(0, 1, -1, 2, 5, 1.5, 100, -0.25, 1e21, 2 ** 53),
  fc.integer({ min: -10, max: 10 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
);
/** The arbitraries over one generator of strings. */
function makeArbitraries(text: fc.Arbitrary<string>) {
  const scalar: fc.Arbitrary<FilterScalar> = fc.oneof(text, number, fc.boolean(), fc.constant(null));

  const { json, object } = fc.letrec<{ json: unknown; object: Record<string, unknown>; array: unknown[] }>((tie) => ({
    json: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("object"), tie("array")),
    object: fc.dictionary(fc.constantFrom(...KEYS), tie("json"), { maxKeys: 4 }),
    array: fc.array(tie("json"), { maxLength: 4 }),
  }));

  const leaf: fc.Arbitrary<FilterNode> = fc.oneof(
    fc.record({
      op: fc.constantFrom("eq", "neq", "contains") as fc.Arbitrary<"eq" | "neq" | "contains">,
      value: scalar,
    }),
    fc.record({
      op: fc.constantFrom("gt", "gte", "lt", "lte") as fc.Arbitrary<"gt">,
      value: fc.oneof(text, number),
    }),
    fc.record({ op: fc.constantFrom("startsWith", "endsWith") as fc.Arbitrary<"startsWith">, value: text }),
    fc.record({
      op: fc.constantFrom("in", "nin") as fc.Arbitrary<"in">,
      values: fc.array(scalar, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({ op: fc.constant("exist") as fc.Arbitrary<"exist">, value: fc.boolean() }),
  );

  const { node } = fc.letrec<{ node: FilterNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.record({ op: fc.constant("field" as const), key: fc.constantFrom(...KEYS), node: tie("node") }),
      fc.record({
        op: fc.constant("object" as const),
        node: fc.record({ op: fc.constant("field" as const), key: fc.constantFrom(...KEYS), node: tie("node") }),
      }),
      fc.record({
        op: fc.constant("object" as const),
        node: fc.record({
          op: fc.constant("and" as const),
          nodes: fc.array(
            fc.record({ op: fc.constant("field" as const), key: fc.constantFrom(...KEYS), node: tie("node") }),
            {
              minLength: 2,
              maxLength: 3,
            },
          ),
        }),
      }),
      fc.record({
        op: fc.constantFrom("and" as const, "or" as const),
        nodes: fc.array(tie("node"), { minLength: 1, maxLength: 3 }),
      }),
      fc.record({ op: fc.constant("not" as const), node: tie("node") }),
    ),
  }));

  const ROOT_KEYS = ["data", "data", "data", "subject", "type", "headers", "missing", "a"];
  const rootNode: fc.Arbitrary<FilterNode> = fc.oneof(
    fc.record({ op: fc.constant("field" as const), key: fc.constantFrom(...ROOT_KEYS), node }),
    fc.record({
      op: fc.constantFrom("and" as const, "or" as const),
      nodes: fc.array(fc.record({ op: fc.constant("field" as const), key: fc.constantFrom(...ROOT_KEYS), node }), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
    fc.record({
      op: fc.constant("not" as const),
      node: fc.record({ op: fc.constant("field" as const), key: fc.constantFrom(...ROOT_KEYS), node }),
    }),
  );

  const document = fc.record({
    data: fc.oneof({ arbitrary: object, weight: 4 }, { arbitrary: json, weight: 1 }),
    subject: fc.option(text, { nil: undefined }),
    type: text,
    headers: fc.dictionary(fc.constantFrom("a", "b", "x-id"), text, { maxKeys: 3 }),
  });
  return { rootNode, document };
}

/** Documents and filters over ordinary strings (every engine stores them). */
export const { rootNode, document } = makeArbitraries(baseText);

/**
 * The same with lone surrogates as well: JSON text keeps them (SQLite, the in-memory filter);
 * PostgreSQL's JSONB refuses them at insert, so its property test uses the ordinary ones.
 */
export const withLoneSurrogates = makeArbitraries(fc.oneof({ weight: 12, arbitrary: baseText }, loneSurrogateText));

export type Doc = ReturnType<typeof makeArbitraries>["document"] extends fc.Arbitrary<infer T> ? T : never;

export function recordOf(doc: Doc, seq: number): EventRecord {
  const event = {
    specversion: "1.0",
    id: `evt_${seq}`,
    source: "/webhooks/x",
    type: doc.type,
    subject: doc.subject,
    time: "2026-01-01T00:00:00Z",
    datacontenttype: "application/json",
    data: doc.data,
    service: "esign",
    upstreamid: String(seq),
    upstreamidkind: "event_id",
    receivedtime: "2026-01-01T00:00:00Z",
  } as GatewayEvent;
  return {
    id: `evt_${seq}`,
    seq,
    sourceId: "x",
    identity: String(seq),
    receivedAt: seq,
    event,
    rawBody: "{}",
    rawBodyEncoding: "utf8",
    headers: doc.headers,
    marks: [],
  };
}
