/** The filter language, table-driven: operators, no coercion, arrays, dialects, limits and problem paths. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";
import { parseEventFilter } from "../../src/filters/event-filter.ts";
import { FILTER_LIMITS } from "../../src/filters/parse-filter.ts";

const doc = {
  event: {
    type: "agreement.completed",
    source: "/webhooks/esign",
    subject: "agreements/agr_1",
    time: "2026-11-22T10:00:00.000Z",
    service: "esign",
    data: {
      amount: 250,
      currency: "EUR",
      status: "completed",
      tags: ["vip", "eu"],
      count: "5",
      flag: false,
      none: null,
      participants: [
        { role: "signer", email: "a@example.com" },
        { role: "viewer", email: "b@example.org" },
      ],
    },
  },
  headers: { "user-agent": "esign-webhooks/1.0", authorization: "[redacted]" },
};

function matches(filter: unknown): boolean {
  const parsed = parseEventFilter({ filter });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.filter?.matches(doc) ?? true;
}

describe("operators", () => {
  it.each<[unknown, boolean]>([
    [{ type: "agreement.completed" }, true],
    [{ type: "agreement.sent" }, false],
    [{ data: { amount: 250 } }, true],
    [{ data: { amount: { $eq: 250 } } }, true],
    [{ data: { amount: { $neq: 100 } } }, true],
    [{ data: { amount: { $neq: 250 } } }, false],
    [{ data: { amount: { $gt: 100, $lte: 250 } } }, true],
    [{ data: { amount: { $gte: 251 } } }, false],
    [{ data: { amount: { $lt: 1000 } } }, true],
    [{ data: { currency: { $in: ["EUR", "USD"] } } }, true],
    [{ data: { currency: { $nin: ["EUR", "USD"] } } }, false],
    [{ type: { $startsWith: "agreement." } }, true],
    [{ subject: { $endsWith: "_1" } }, true],
    [{ data: { status: { $contains: "plet" } } }, true],
    [{ data: { tags: { $contains: "vip" } } }, true],
    [{ data: { tags: { $contains: "gold" } } }, false],
    [{ data: { missing: { $exist: false } } }, true],
    [{ data: { none: { $exist: true } } }, true],
    [{ data: { none: null } }, true],
    [{ $or: [{ type: "x" }, { data: { amount: 250 } }] }, true],
    [{ $and: [{ type: "agreement.completed" }, { data: { amount: 1 } }] }, false],
    [{ $not: { type: "x" } }, true],
    [{ data: { amount: { $not: { $gt: 300 } } } }, true],
    [{ time: { $gte: "2026-11-22T00:00:00Z", $lt: "2026-11-23" } }, true],
    [{ headers: { "user-agent": { $startsWith: "esign-webhooks/" } } }, true],
    [{ headers: { authorization: { $neq: "[redacted]" } } }, false],
  ])("%j → %s", (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });
});

describe("no type coercion", () => {
  it.each<[unknown, boolean]>([
    [{ data: { amount: "250" } }, false],
    [{ data: { count: 5 } }, false],
    [{ data: { count: { $gt: 1 } } }, false],
    [{ data: { count: { $gt: "1" } } }, true],
    [{ data: { flag: 0 } }, false],
    [{ data: { flag: false } }, true],
    [{ data: { amount: { $neq: "x" } } }, false],
    [{ data: { missing: { $neq: 1 } } }, false],
    [{ data: { missing: { $nin: [1] } } }, false],
    [{ data: { missing: { $not: { $eq: 1 } } } }, true],
  ])("%j → %s", (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });
});

describe("arrays match on any element", () => {
  it.each<[unknown, boolean]>([
    [{ data: { tags: "eu" } }, true],
    [{ data: { tags: { $in: ["us", "eu"] } } }, true],
    [{ data: { tags: { $startsWith: "v" } } }, true],
    [{ data: { participants: { role: "viewer" } } }, true],
    [{ data: { participants: { role: "viewer", email: { $endsWith: ".org" } } } }, true],
    [{ data: { participants: { role: "viewer", email: { $endsWith: ".com" } } } }, false],
    [{ data: { participants: { email: { $contains: "@example." } } } }, true],
    [{ data: { tags: { $not: "vip" } } }, false],
  ])("%j → %s", (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });
});

describe("CloudEvents Subscriptions dialects in filters", () => {
  it.each<[unknown, boolean]>([
    [[{ exact: { type: "agreement.completed" } }], true],
    [[{ prefix: { type: "agreement." } }, { suffix: { subject: "_2" } }], false],
    [[{ any: [{ exact: { type: "x" } }, { suffix: { source: "/esign" } }] }], true],
    [[{ all: [{ prefix: { type: "agreement" } }, { not: { exact: { service: "staffing" } } }] }], true],
  ])("%j → %s", (filters, expected) => {
    const parsed = parseEventFilter({ filters });
    expect(parsed.ok && parsed.filter?.matches(doc)).toBe(expected);
  });
});

describe("invalid filters name the bad part", () => {
  const problem = (input: { filter?: unknown; filters?: unknown }) => {
    const parsed = parseEventFilter(input);
    return parsed.ok ? undefined : parsed.problems.map((p) => p.path.join("."));
  };
  it.each<[{ filter?: unknown; filters?: unknown }, string]>([
    [{ filter: { data: { amount: { $gtx: 1 } } } }, "filter.data.amount.$gtx"],
    [{ filter: { data: { amount: { $gt: true } } } }, "filter.data.amount.$gt"],
    [{ filter: { data: { tags: ["a"] } } }, "filter.data.tags"],
    [{ filter: { $or: [{ type: "a" }, { data: { $in: [] } }] } }, "filter.$or.1.data.$in"],
    [{ filter: { $eq: 1 } }, "filter"],
    [{ filter: { data: { $exist: "yes" } } }, "filter.data.$exist"],
    [{ filter: { data: { $regex: "^a" } } }, "filter.data.$regex"],
    [{ filters: [{ exact: { type: 1 } }] }, "filters.0.exact.type"],
    [{ filters: [{ like: { type: "a" } }] }, "filters.0.like"],
  ])("%j → %s", (input, path) => {
    expect(problem(input)).toContain(path);
  });

  it("bounds depth, size and array lengths", () => {
    let deep: unknown = 1;
    for (let i = 0; i <= FILTER_LIMITS.maxDepth + 1; i++) deep = { a: deep };
    expect(parseEventFilter({ filter: deep }).ok).toBe(false);
    const wide = Object.fromEntries(Array.from({ length: FILTER_LIMITS.maxNodes + 1 }, (_, i) => [`k${i}`, i]));
    expect(parseEventFilter({ filter: { data: wide } }).ok).toBe(false);
    const long = Array.from({ length: FILTER_LIMITS.maxArray + 1 }, (_, i) => i);
    expect(problem({ filter: { data: { n: { $in: long } } } })).toContain("filter.data.n.$in");
  });

  it("a config with a bad route filter names routes.N.filter... and stops", () => {
    const raw = {
      sources: [{ id: "esign", service: "esign", secrets: ["whsec_dGVzdHRlc3R0ZXN0dGVzdA=="] }],
      destinations: [{ id: "live", type: "stream" }],
      routes: [
        { destinations: ["live"] },
        { destinations: ["live"] },
        { destinations: ["live"] },
        { filter: { data: { amount: { $gtx: 100 } } }, destinations: ["live"] },
      ],
    };
    expect(() => resolveConfig(raw, {})).toThrow(ConfigError);
    try {
      resolveConfig(raw, {});
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        expect.stringMatching(
          /^routes\.3\.filter\.data\.amount\.\$gtx: expected a known operator .*unknown operator \$gtx/,
        ),
      ]);
    }
  });
});

describe("hostile input", () => {
  it("any JSON is either a filter or refused with problems; nothing throws", () => {
    const operatorKeys = fc.constantFrom("$eq", "$in", "$or", "$not", "$gtx", "$exist", "a", "data", "__proto__");
    const json = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.jsonValue({ maxDepth: 2 }),
        fc.dictionary(operatorKeys, tie("value"), { maxKeys: 3 }),
        fc.array(tie("value"), { maxLength: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, json, (filter, filters) => {
        const parsed = parseEventFilter({ filter, filters });
        if (parsed.ok) parsed.filter?.matches(doc);
        else expect(parsed.problems.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });
});
