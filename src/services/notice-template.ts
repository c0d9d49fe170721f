/**
 * Writes a mail notice (heading, sentences, labelled facts) once and renders it to the text and
 * HTML layout every default template shares. Used by each service's default templates
 * (src/services/<name>/*-templates.ts) and the generic template of src/delivery/email.
 */
import type { ServiceMailTemplate } from "./service-contract.ts";

/** One notice. Labels and sentences are constants without markup. */
export interface Notice {
  subject: string;
  heading: string;
  lines: string[];
  facts: [label: string, value: string][];
  /** Append the event data as JSON (generic template). */
  dumpData?: boolean;
}

const FOOTER = "Sent by the webhook gateway for event {{id}} ({{type}}), received {{receivedtime | time}}.";

/** The fallback shown when a fact is absent from the event. */
export const NOT_GIVEN = '"not given"';

/** Text and HTML of one notice. */
export function noticeTemplate(notice: Notice): ServiceMailTemplate {
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
