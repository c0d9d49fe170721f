/**
 * Building one mail from a recorded event: default templates of the notable events (from
 * realistic sample bodies), template selection, recipients from fields, the Message-ID.
 */
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { buildEmailMessage, selectTemplate } from "../../../src/delivery/email/build-email-message.ts";
import { DEFAULT_TEMPLATES, GENERIC_TEMPLATE } from "../../../src/delivery/email/default-templates.ts";
import { type EmailDestination, EmailDestinationSchema } from "../../../src/delivery/email/email-destination-schema.ts";
import { deriveMessageId } from "../../../src/delivery/email/message-id.ts";
import { resolveRecipients } from "../../../src/delivery/email/resolve-recipients.ts";
import { buildEsignBody } from "../../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../../src/services/staffing/staffing-samples.ts";
import { makeTestRecord } from "../../conformance/sink-conformance.ts";

function destination(patch: Record<string, unknown> = {}): EmailDestination {
  return v.parse(EmailDestinationSchema, {
    id: "ops-mail",
    type: "email",
    host: "127.0.0.1",
    from: "Gateway <gateway@example.com>",
    to: ["ops@example.com"],
    ...patch,
  });
}

const esign = (type: string) =>
  makeTestRecord({ type, service: "esign", subject: "agreements/8d5f", data: buildEsignBody(type) });
const staffing = (type: string, data: Record<string, unknown> = buildStaffingBody(type)) =>
  makeTestRecord({ type, service: "staffing", subject: "staffing-requests/sr_1", data });

function build(record: ReturnType<typeof esign>, patch: Record<string, unknown> = {}) {
  const built = buildEmailMessage(destination(patch), record);
  if (!built.ok) throw new Error(built.error);
  return built.message;
}

describe("default templates of the notable events", () => {
  it.each([
    [
      "agreement.completed",
      esign,
      "Agreement completed: crm-deal-4711",
      ["Anna Svensson, Erik Lind", "eid", "acme_crm"],
    ],
    ["agreement.declined", esign, "Agreement declined: crm-deal-4711", ["anna.svensson@example.com", "declined"]],
    [
      "agreement.expired",
      esign,
      "Agreement expired: crm-deal-4711",
      ["8d5f2a7e-3c1b-4f7e-9a51-2b6c0d9e4f13", "expired"],
    ],
    [
      "candidate.accepted",
      staffing,
      "Candidate accepted: Karin Berg for shift-2026-11-24-night-ward3",
      ["+46701234567", "Ja, jag kan ta passet.", "0.96", "Accepted the night shift."],
    ],
    [
      "staffing.requires_review",
      staffing,
      "Staffing request needs review: shift-2026-11-24-night-ward3",
      ["sr_01J9Z6K8Q4W2E7R5T3Y1U9I0OP", "requires_review"],
    ],
    ["staffing.failed", staffing, "Staffing request failed: shift-2026-11-24-night-ward3", ["failed", "retried"]],
  ] as const)("%s", (type, make, subject, facts) => {
    const message = build(make(type));
    expect(message.subject).toBe(subject);
    for (const fact of facts) {
      expect(message.text).toContain(fact);
      expect(message.html).toContain(fact);
    }
    expect(message.text).toContain(message.headers["X-Gateway-Event-Id"]);
    expect(`${message.text}${message.html}`).not.toContain("{{");
    expect(message.html).toMatch(/^<!doctype html>/);
  });

  it("covers exactly the notable types; every other type gets the generic template with the data", () => {
    expect(Object.keys(DEFAULT_TEMPLATES).sort()).toEqual([
      "agreement.completed",
      "agreement.declined",
      "agreement.expired",
      "candidate.accepted",
      "staffing.failed",
      "staffing.requires_review",
    ]);
    const message = build(esign("agreement.viewed"));
    expect(message.subject).toBe("agreement.viewed: agreements/8d5f");
    expect(message.text).toContain('"event_id": "evt-');
    expect(message.html).toContain("&#34;event_id&#34;: &#34;evt-");
  });

  it("reads fallbacks when optional fields are missing", () => {
    const message = build(staffing("candidate.accepted", { event: "candidate.accepted", staffingRequestId: "sr_9" }));
    expect(message.subject).toBe("Candidate accepted: a candidate for sr_9");
    expect(message.text).toContain("Phone: not given");
  });

  it("escapes hostile values in the HTML body of a default template", () => {
    const data = {
      ...buildStaffingBody("candidate.accepted"),
      candidate: { id: "c", name: "<img src=x onerror=alert(1)>" },
    };
    const message = build(staffing("candidate.accepted", data));
    expect(message.html).not.toContain("<img");
    expect(message.html).toContain("&#60;img src=x onerror=alert(1)&#62;");
    expect(message.text).toContain("<img src=x onerror=alert(1)>");
  });
});

describe("template selection", () => {
  const t = (name: string) => ({ subject: name, text: name });
  const templates = {
    "*": t("any"),
    "agreement.*": t("agreement"),
    "agreement.com*": t("agreement.com"),
    "agreement.completed": t("exact"),
  };

  it.each([
    ["agreement.completed", "exact"],
    ["agreement.comment_created", "agreement.com"],
    ["agreement.sent", "agreement"],
    ["candidate.accepted", "any"],
  ])("%s uses %s", (type, expected) => {
    expect(selectTemplate(templates, type).subject).toBe(expected);
  });

  it("falls back to the defaults, then the generic template; a template without html sends text only", () => {
    expect(selectTemplate({ "candidate.*": t("c") }, "agreement.completed")).toBe(
      DEFAULT_TEMPLATES["agreement.completed"],
    );
    expect(selectTemplate({}, "agreement.sent")).toBe(GENERIC_TEMPLATE);
    const message = build(esign("agreement.completed"), {
      templates: { "agreement.completed": { subject: "S {{data.status}}", text: "T" } },
    });
    expect(message).toMatchObject({ subject: "S completed", text: "T" });
    expect(message.html).toBeUndefined();
  });
});

describe("recipients", () => {
  it("adds valid addresses from event fields to the static ones, deduplicated", () => {
    const record = esign("agreement.completed");
    const result = resolveRecipients(
      {
        to: ["ops@example.com", "Anna.Svensson@example.com"],
        toFields: ["data.participant.email", "data.participants.*.email"],
      },
      record.event,
    );
    expect(result).toEqual({
      to: ["ops@example.com", "Anna.Svensson@example.com", "erik.lind@example.com"],
      skipped: 0,
    });
  });

  it("skips values that are not addresses, including header injection attempts", () => {
    const record = staffing("candidate.accepted", {
      contacts: [
        "ok@example.com",
        "x@example.com\r\nBcc: evil@example.com",
        "not an address",
        42,
        { email: "o@example.com" },
      ],
    });
    expect(resolveRecipients({ to: [], toFields: ["data.contacts"] }, record.event)).toEqual({
      to: ["ok@example.com"],
      skipped: 4,
    });
  });

  it("an event without a usable address is a permanent failure with a reason", () => {
    const built = buildEmailMessage(
      destination({ to: [], toFields: ["data.participant.email"] }),
      staffing("staffing.failed"),
    );
    expect(built).toEqual({ ok: false, error: expect.stringMatching(/no recipient address in the event/) });
    const none = buildEmailMessage(destination({ to: [] }), staffing("staffing.failed"));
    expect(none).toEqual({ ok: false, error: expect.stringMatching(/no recipients configured/) });
  });
});

describe("Message-ID and headers", () => {
  it("is derived from the event id and the destination, stable across builds", () => {
    const record = esign("agreement.declined");
    const first = build(record);
    expect(first.messageId).toBe(`<${record.id}.ops-mail@gateway>`);
    expect(build(record).messageId).toBe(first.messageId);
    expect(build(record, { id: "legal-mail" }).messageId).toBe(`<${record.id}.legal-mail@gateway>`);
    expect(build(record, { messageIdDomain: "gw.example.com" }).messageId).toBe(
      `<${record.id}.ops-mail@gw.example.com>`,
    );
    expect(deriveMessageId("evt_a b<c>", "x", "gateway")).toBe("<evt_a-b-c-.x@gateway>");
  });

  it("names the event and marks the mail as auto-generated; the date is the event time", () => {
    const record = esign("agreement.expired");
    const message = build(record, { replyTo: "support@example.com" });
    expect(message.headers).toEqual({
      "X-Gateway-Event-Id": record.id,
      "X-Gateway-Event-Type": "agreement.expired",
      "Auto-Submitted": "auto-generated",
    });
    expect(message.date.toISOString()).toBe(record.event.time);
    expect(message.replyTo).toBe("support@example.com");
  });
});
