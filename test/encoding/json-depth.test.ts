/**
 * The JSON nesting bound: table cases (arrays, objects, brackets and escaped quotes inside
 * strings, exactly at the bound) and a property: for any JSON value, the scan agrees with the
 * depth of the parsed value.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exceedsJsonDepth, parseBoundedJson } from "../../src/encoding/json-depth.ts";

function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce((max: number, child) => Math.max(max, depthOf(child)), 0);
}

const nest = (depth: number, open: string, close: string) => `${open.repeat(depth)}${close.repeat(depth)}`;

describe("exceedsJsonDepth", () => {
  it.each([
    ["arrays at the bound", nest(128, "[", "]"), false],
    ["arrays one past the bound", nest(129, "[", "]"), true],
    ["objects past the bound", `${'{"a":'.repeat(200)}1${"}".repeat(200)}`, true],
    ["brackets inside a string", JSON.stringify({ s: "[".repeat(5000) }), false],
    ["escaped quotes inside a string", JSON.stringify({ s: `\\"${"[".repeat(300)}` }), false],
    ["a nesting bomb of 10,000", nest(10_000, "[", "]"), true],
    ["a shallow object", '{"a":[1,2,{"b":null}]}', false],
  ])("%s", (_, text, expected) => {
    expect(exceedsJsonDepth(text)).toBe(expected);
  });

  it("parseBoundedJson refuses past the bound with a SyntaxError and parses below it", () => {
    expect(() => parseBoundedJson(nest(200, "[", "]"))).toThrow(SyntaxError);
    expect(parseBoundedJson('{"a":[1]}')).toEqual({ a: [1] });
  });

  it("agrees with the parsed value's depth (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 12 }), (value, bound) => {
        expect(exceedsJsonDepth(JSON.stringify(value), bound)).toBe(depthOf(value) > bound);
      }),
      { numRuns: 2000 },
    );
  });
});
