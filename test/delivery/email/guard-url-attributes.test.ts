/** Issue 12 row 11: URL attributes of rendered HTML mail accept only http(s) and mailto. */
import { expect, test } from "vitest";
import { guardUrlAttributes } from "../../../src/delivery/email/guard-url-attributes.ts";
import { renderTemplate } from "../../../src/delivery/email/render-template.ts";

const render = (template: string, data: unknown) => guardUrlAttributes(renderTemplate(template, { data }, "html"));

test.each([
  ["javascript:alert(1)"],
  [" JaVaScRiPt:alert(1)"],
  ["java\tscript:alert(1)"],
  ["data:text/html,<script>alert(1)</script>"],
  ["vbscript:x"],
  ["//evil.example/x"],
])("an event value %j in href becomes #", (value) => {
  expect(render('<a href="{{data.url}}">open</a>', { url: value })).toBe('<a href="#">open</a>');
  expect(render("<img/src={{data.url}}>", { url: value })).toMatch(/^<img\/src=\s*"#"/);
});

test("http(s) and mailto values stay; text content is untouched", () => {
  expect(render('<a href="{{data.url}}">x</a>', { url: "https://app.example.com/a?b=1&c=2" })).toBe(
    '<a href="https://app.example.com/a?b=1&#38;c=2">x</a>',
  );
  expect(render("<a href='{{data.url}}'>x</a>", { url: "mailto:ops@example.com" })).toBe(
    "<a href='mailto:ops@example.com'>x</a>",
  );
  expect(render("<p>{{data.text}}</p>", { text: "<img src=javascript:x>" })).toBe(
    "<p>&#60;img src=javascript:x&#62;</p>",
  );
});

test("a template's own entity-encoded javascript: link is neutralised too", () => {
  expect(guardUrlAttributes('<a href="&#106;avascript&colon;x">x</a>')).toBe('<a href="#">x</a>');
});
