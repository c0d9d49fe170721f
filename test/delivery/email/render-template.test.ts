/** Template placeholders: paths, alternatives, escaping, subject lines, and nothing executable. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  escapeHtml,
  findTemplateProblem,
  renderSubject,
  renderTemplate,
} from "../../../src/delivery/email/render-template.ts";

const event = {
  id: "evt_0123",
  type: "candidate.accepted",
  subject: "staffing-requests/sr_1",
  data: {
    staffingRequestId: "sr_1",
    externalId: null,
    candidate: { name: "Karin <Berg>", phone: "+46701234567" },
    result: { confidence: 0.96, requiresReview: false, summary: "" },
    participants: [
      { name: "Anna Svensson", email: "anna@example.com" },
      { name: "Erik Lind", email: "erik@example.com" },
    ],
    tags: ["night", "ward 3"],
    nested: { a: 1 },
  },
};

describe("renderTemplate", () => {
  it.each([
    ["top-level attribute", "{{type}}", "candidate.accepted"],
    ["spaces inside braces", "{{  subject  }}", "staffing-requests/sr_1"],
    ["nested path", "{{data.candidate.phone}}", "+46701234567"],
    ["array index", "{{data.participants.1.email}}", "erik@example.com"],
    ["every item of a list", "{{data.participants.*.name}}", "Anna Svensson, Erik Lind"],
    ["list of scalars", "{{data.tags}}", "night, ward 3"],
    ["number", "{{data.result.confidence}}", "0.96"],
    ["false is a value", "{{data.result.requiresReview}}", "false"],
    ["object as JSON", "{{data.nested}}", '{\n  "a": 1\n}'],
    ["missing path", "[{{data.nope.deeper}}]", "[]"],
    ["null falls through", '{{data.externalId | "none"}}', "none"],
    ["empty string falls through", "{{data.result.summary | data.staffingRequestId}}", "sr_1"],
    ["first alternative with a value", '{{data.nope | subject | "x"}}', "staffing-requests/sr_1"],
    ["no alternative has a value", "<{{data.nope | data.externalId}}>", "<>"],
    [
      "text around placeholders",
      "Hi {{data.candidate.phone}}, re {{type}}.",
      "Hi +46701234567, re candidate.accepted.",
    ],
  ])("%s", (_, template, expected) => {
    expect(findTemplateProblem(template)).toBeUndefined();
    expect(renderTemplate(template, event, "text")).toBe(expected);
  });

  it("escapes event values in HTML but keeps the author's markup and literals", () => {
    const html = renderTemplate(
      '<b title="{{data.candidate.name}}">{{data.candidate.name}}</b> {{data.nope | "<i>n/a</i>"}}',
      event,
      "html",
    );
    expect(html).toBe('<b title="Karin &#60;Berg&#62;">Karin &#60;Berg&#62;</b> <i>n/a</i>');
  });

  it("never reaches outside the event's own JSON (prototype, constructor)", () => {
    for (const path of [
      "constructor",
      "__proto__",
      "data.__proto__",
      "data.candidate.constructor.name",
      "toString",
      "data.tags.length",
    ]) {
      expect(renderTemplate(`{{${path}}}`, event, "text")).toBe("");
    }
  });

  it("HTML output holds no markup from values, whatever they are (property)", () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const html = renderTemplate("<p>{{data.x}}</p>", { data: { x: value } }, "html");
        expect(html).toBe(value === "" ? "<p></p>" : `<p>${escapeHtml(value)}</p>`);
        expect(html.slice(3, -4)).not.toMatch(/[<>"']/);
      }),
    );
  });
});

describe("findTemplateProblem", () => {
  it.each([
    ["an expression", "{{ data.a + 1 }}"],
    ["a function call", "{{ process.exit() }}"],
    ["a helper", "{{#each data.participants}}x{{/each}}"],
    ["an unquoted literal with spaces", "{{ data.a | not given }}"],
    ["an empty placeholder", "{{}}"],
    ["an unclosed placeholder", "Hello {{ type"],
    ["a quote inside a literal", '{{ data.a | "say "hi"" }}'],
  ])("rejects %s", (_, template) => {
    expect(findTemplateProblem(template)).toEqual(expect.any(String));
    // An invalid placeholder renders as written: nothing is evaluated.
    expect(renderTemplate(template, event, "text")).not.toContain("candidate.accepted");
  });
});

describe("renderSubject", () => {
  it("turns line breaks and control characters from values into single spaces", () => {
    const subject = renderSubject("Re: {{data.x}}", { data: { x: "a\r\nBcc: evil@example.com\u0000\tb" } });
    expect(subject).toBe("Re: a Bcc: evil@example.com b");
  });

  it("cuts long subjects to 250 characters", () => {
    const subject = renderSubject("{{data.x}}", { data: { x: "y".repeat(1000) } });
    expect(subject).toHaveLength(250);
    expect(subject.endsWith("…")).toBe(true);
  });

  it("never yields a line break (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (value) => {
        expect(renderSubject("S {{data.x}} E", { data: { x: value } })).not.toMatch(/[\r\n\u2028\u2029]/);
      }),
    );
  });
});
