/**
 * Pattern containment (how a requested filter is checked against a scope) and filter matching:
 * a table of cases, and a property: whenever `isPatternWithin(inner, outer)` says yes, every
 * string `inner` matches is matched by `outer` (soundness; a wrong "yes" would leak events).
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { EventRecord } from "../../src/store/contract.ts";
import { compileTypePattern } from "../../src/store/match-event-query.ts";
import { compileStreamFilter, isPatternWithin } from "../../src/stream/stream-filter.ts";
import { compileScope, findScopeViolations } from "../../src/stream/stream-scope.ts";

describe("isPatternWithin", () => {
  test.each([
    ["agreement.completed", "agreement.*", true],
    ["agreement.*", "agreement.*", true],
    ["agreement.*", "*", true],
    ["*", "agreement.*", false],
    ["agreement.*", "agreement.completed", false],
    ["agreement.c*", "agreement.*", true],
    ["agreement*", "agreement.*", false],
    ["a*c", "a*", true],
    ["a*", "a*c", false],
    ["agreements/123", "agreements/*", true],
    ["agreements/*/x", "agreements/*", true],
    ["esign", "staffing", false],
    ["*.*", "*", true],
    ["x*y*z", "x*z", true],
    ["x*z", "x*y*z", false],
  ])("%s within %s: %s", (inner, outer, expected) => {
    expect(isPatternWithin(inner, outer)).toBe(expected);
  });

  test("property: a yes is always sound", () => {
    const alphabet = fc.constantFrom("a", "b", ".", "*");
    const pattern = fc.array(alphabet, { minLength: 1, maxLength: 6 }).map((chars) => chars.join(""));
    const filler = fc.array(fc.constantFrom("a", "b", ".", "c"), { maxLength: 4 }).map((c) => c.join(""));
    fc.assert(
      fc.property(pattern, pattern, fc.array(filler, { minLength: 7, maxLength: 7 }), (inner, outer, fills) => {
        fc.pre(isPatternWithin(inner, outer));
        // Instantiate every `*` of inner with some string: outer must match the result.
        let i = 0;
        const instance = inner.replace(/\*/g, () => fills[i++] ?? "");
        expect(compileTypePattern(outer)(instance)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

const record = (sourceId: string, type: string, subject?: string) =>
  ({ sourceId, seq: 1, event: { type, subject } }) as unknown as EventRecord;

describe("filters and scopes", () => {
  test("dimensions are and-ed, patterns within a dimension or-ed; an absent subject never matches a subject filter", () => {
    const matches = compileStreamFilter({ source: ["esign"], type: ["agreement.signed", "agreement.completed"] });
    expect(matches(record("esign", "agreement.completed"))).toBe(true);
    expect(matches(record("esign", "agreement.sent"))).toBe(false);
    expect(matches(record("staffing", "agreement.completed"))).toBe(false);
    expect(compileStreamFilter({ subject: ["agreements/*"] })(record("esign", "x"))).toBe(false);
    expect(compileStreamFilter({})(record("staffing", "anything"))).toBe(true);
  });

  test("every scope layer applies; a filter must lie within each layer that restricts its dimension", () => {
    const layers = [{ source: ["esign"], type: ["agreement.*"] }, { type: ["agreement.signed"] }];
    const visible = compileScope(layers);
    expect(visible(record("esign", "agreement.signed"))).toBe(true);
    expect(visible(record("esign", "agreement.completed"))).toBe(false);
    expect(findScopeViolations(layers, { type: ["agreement.signed"], subject: ["agreements/1"] })).toEqual([]);
    expect(findScopeViolations(layers, { type: ["agreement.*"], source: ["*"] })).toEqual([
      { dimension: "source", pattern: "*" },
      { dimension: "type", pattern: "agreement.*" },
    ]);
  });
});
