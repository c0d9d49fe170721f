/**
 * Built-in mail templates for the notable events of both services: agreement completed,
 * declined or expired (e-sign); candidate accepted, staffing request needing review or failed
 * (staffing); and a generic one for every other type. Each is written once as a notice
 * (heading, sentences, labelled facts) and rendered to the same text and HTML layout.
 * Paths follow the upstream bodies in the seeds: the CloudEvent `data` is the body as received.
 */
import type { EmailTemplate } from "./email-destination-schema.ts";

interface Notice {
  subject: string;
  heading: string;
  lines: string[];
  facts: [label: string, value: string][];
  /** Append the event data as JSON (generic template). */
  dumpData?: boolean;
}

const FOOTER = "Sent by the webhook gateway for event {{id}} ({{type}}), received {{receivedtime | time}}.";
const NOT_GIVEN = '"not given"';

/** Text and HTML of one notice. Labels and sentences are constants without markup. */
function toTemplate(notice: Notice): EmailTemplate {
  const text = [
    notice.heading,
    "",
    ...notice.lines.flatMap((line) => [line, ""]),
    ...notice.facts.map(([label, value]) => `${label}: ${value}`),
    ...(notice.dumpData ? ["", "Data:", "{{data}}"] : []),
    "",
    "-- ",
    FOOTER,
    "",
  ].join("\n");
  const rows = notice.facts.map(
    ([label, value]) =>
      `<tr><th align="left" style="padding:4px 12px 4px 0;vertical-align:top">${label}</th><td style="padding:4px 0">${value}</td></tr>`,
  );
  const html = [
    '<!doctype html><html><body style="font-family:Arial,sans-serif;line-height:1.45;color:#1f2328">',
    `<h2 style="margin:0 0 12px">${notice.heading}</h2>`,
    ...notice.lines.map((line) => `<p>${line}</p>`),
    `<table style="border-collapse:collapse">${rows.join("")}</table>`,
    ...(notice.dumpData ? ['<pre style="background:#f6f8fa;padding:8px;white-space:pre-wrap">{{data}}</pre>'] : []),
    `<p style="color:#6e7781;font-size:12px">${FOOTER}</p>`,
    "</body></html>",
  ].join("\n");
  return { subject: notice.subject, text, html };
}

const agreementFacts = (extra: [string, string][]): [string, string][] => [
  ["Agreement", "{{data.agreement_id | subject}}"],
  ["External reference", `{{data.external_id | ${NOT_GIVEN}}}`],
  ["External source", `{{data.external_source | ${NOT_GIVEN}}}`],
  ...extra,
  ["Status", `{{data.status | ${NOT_GIVEN}}}`],
];

const staffingFacts: [string, string][] = [
  ["Staffing request", "{{data.staffingRequestId | subject}}"],
  ["External id", `{{data.externalId | ${NOT_GIVEN}}}`],
  ["Status", `{{data.status | ${NOT_GIVEN}}}`],
  ["Occurred at", "{{data.occurredAt | time}}"],
];

const agreementRef = "{{data.external_id | data.agreement_id | subject}}";
const staffingRef = "{{data.externalId | data.staffingRequestId | subject}}";

/** Defaults by exact event type. */
export const DEFAULT_TEMPLATES: Readonly<Record<string, EmailTemplate>> = {
  "agreement.completed": toTemplate({
    subject: `Agreement completed: ${agreementRef}`,
    heading: "Agreement completed",
    lines: ["Every participant has signed. The signed PDF can be fetched through the e-sign API."],
    facts: agreementFacts([
      ["Participants", `{{data.participants.*.name | data.participants.*.email | ${NOT_GIVEN}}}`],
      ["Signature method", `{{data.signature.method | ${NOT_GIVEN}}}`],
    ]),
  }),
  "agreement.declined": toTemplate({
    subject: `Agreement declined: ${agreementRef}`,
    heading: "Agreement declined",
    lines: ["A participant declined the agreement, which is now closed. Send a new version to continue."],
    facts: agreementFacts([["Declined by", `{{data.participant.email | ${NOT_GIVEN}}}`]]),
  }),
  "agreement.expired": toTemplate({
    subject: `Agreement expired: ${agreementRef}`,
    heading: "Agreement expired",
    lines: ["The agreement expired before every participant signed. Send a new version to continue."],
    facts: agreementFacts([]),
  }),
  "candidate.accepted": toTemplate({
    subject: `Candidate accepted: {{data.candidate.name | "a candidate"}} for ${staffingRef}`,
    heading: "Candidate accepted",
    lines: ["A candidate accepted the shift on the phone."],
    facts: [
      ["Candidate", `{{data.candidate.name | ${NOT_GIVEN}}}`],
      ["Phone", `{{data.candidate.phone | ${NOT_GIVEN}}}`],
      ["Answer", `{{data.result.answer | ${NOT_GIVEN}}}`],
      ["Summary", `{{data.result.summary | ${NOT_GIVEN}}}`],
      ["Confidence", `{{data.result.confidence | ${NOT_GIVEN}}}`],
      ["Needs review", `{{data.result.requiresReview | ${NOT_GIVEN}}}`],
      ["Staffing request", "{{data.staffingRequestId | subject}}"],
      ["External id", `{{data.externalId | ${NOT_GIVEN}}}`],
    ],
  }),
  "staffing.requires_review": toTemplate({
    subject: `Staffing request needs review: ${staffingRef}`,
    heading: "Staffing request needs review",
    lines: [
      "A candidate's answer needs a manual decision before the shift is booked: manager approval is required, or the confidence is below the auto-booking threshold.",
    ],
    facts: staffingFacts,
  }),
  "staffing.failed": toTemplate({
    subject: `Staffing request failed: ${staffingRef}`,
    heading: "Staffing request failed",
    lines: [
      "No candidate could be booked: the candidate list is exhausted or no candidate was available. The request can be retried through the staffing API.",
    ],
    facts: staffingFacts,
  }),
};

/** For every type without a default: the envelope's attributes and the data as JSON. */
export const GENERIC_TEMPLATE: EmailTemplate = toTemplate({
  subject: "{{type}}: {{subject | source}}",
  heading: "{{type}}",
  lines: [],
  facts: [
    ["Type", "{{type}}"],
    ["Subject", `{{subject | ${NOT_GIVEN}}}`],
    ["Source", "{{source}}"],
    ["Time", "{{time}}"],
  ],
  dumpData: true,
});
