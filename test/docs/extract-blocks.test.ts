/**
 * The doc test's Markdown reader: which blocks it finds, what kind each is, and which annotation
 * belongs to which block (test/docs/extract-blocks.ts).
 */
import { describe, expect, it } from "vitest";
import { classify, extractBlocks, parseAnnotation } from "./extract-blocks.ts";

describe("classify", () => {
  it.each([
    ["sh", "recipe"],
    ["bash", "recipe"],
    ["json config", "json-config"],
    ["ts config", "ts-config"],
    ["typescript config", "ts-config"],
    ["json", "json"],
    ["js", "code"],
    ["ts", "code"],
    ["html", "code"],
    ["text", "output"],
    ["toml", "output"],
    ["mermaid", "diagram"],
    ["", "unknown"],
    ["jsonc", "unknown"],
    ["json5", "unknown"],
    ["sh config", "unknown"],
    ["shell", "unknown"],
    ["yaml", "unknown"],
  ])("%j is %s", (info, kind) => {
    expect(classify(info)).toBe(kind);
  });
});

describe("extractBlocks", () => {
  it("finds backtick and tilde fences, indented ones, and longer fences holding shorter ones", () => {
    const page = [
      "# Page",
      "```sh",
      "echo one",
      "```",
      "- a list item:",
      "  ```json",
      '  { "a": 1 }',
      "  ```",
      "~~~text",
      "```not a fence here```",
      "~~~",
      "````text",
      "```sh",
      "inner",
      "```",
      "````",
    ].join("\n");
    const blocks = extractBlocks("p.md", page);
    expect(blocks.map((b) => [b.line, b.info, b.body])).toEqual([
      [2, "sh", "echo one\n"],
      [6, "json", '{ "a": 1 }\n'],
      [9, "text", "```not a fence here```\n"],
      [12, "text", "```sh\ninner\n```\n"],
    ]);
  });

  it("gives a block the annotation right before it (blank lines allowed), never one with prose in between", () => {
    const page = [
      "<!-- doctest",
      "expect: ok",
      "-->",
      "",
      "```sh",
      "echo ok",
      "```",
      "<!-- doctest",
      "skip: this block needs a real account",
      "-->",
      "Some prose after the comment.",
      "```sh",
      "echo unannotated",
      "```",
    ].join("\n");
    const [first, second] = extractBlocks("p.md", page);
    expect(first?.annotation.expect).toEqual(["ok"]);
    expect(second?.annotation.skip).toBeUndefined();
  });

  it("reports an unclosed fence", () => {
    expect(extractBlocks("p.md", "```sh\necho\n")[0]?.problems).toContain("unclosed fence");
  });
});

describe("parseAnnotation", () => {
  it("reads every directive; expect and env repeat", () => {
    const { annotation, problems } = parseAnnotation(
      [
        "session: redis",
        "background: Ready to accept",
        "expect: a: b",
        "expect: c",
        "env: A=1",
        "env: B=x=y",
        "timeout: 90",
        "eventually: 20",
        "gateway: none",
      ].join("\n"),
    );
    expect(problems).toEqual([]);
    expect(annotation).toEqual({
      session: "redis",
      background: "Ready to accept",
      expect: ["a: b", "c"],
      env: { A: "1", B: "x=y" },
      timeout: 90,
      eventually: 20,
      gateway: "none",
    });
  });

  it.each([
    ["expct: typo", /unknown directive/],
    ["skip: short", /skip needs a reason/],
    ["timeout: 0", /timeout 1\.\.120/],
    ["timeout: many", /timeout 1\.\.120/],
    ["env: NOVALUE", /env needs NAME=value/],
    ["gateway: maybe", /gateway is zero-config or none/],
    ["session:", /session needs a value/],
  ])("refuses %j", (text, problem) => {
    expect(parseAnnotation(text).problems.join()).toMatch(problem);
  });
});
