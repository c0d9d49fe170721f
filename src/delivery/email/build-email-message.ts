/**
 * Builds the mail for one recorded event and one email destination: picks the template, renders
 * subject, text and HTML, resolves the recipients and derives the Message-ID. Pure: the same
 * record and destination always give the same message.
 */

import { compileTypePattern } from "../../store/match-event-query.ts";
import type { DeliverableRecord } from "../sink-contract.ts";
import { DEFAULT_TEMPLATES, GENERIC_TEMPLATE } from "./default-templates.ts";
import type { EmailTemplate } from "./email-destination-schema.ts";
import { guardUrlAttributes } from "./guard-url-attributes.ts";
import type { MailDestination } from "./http-email-destination-schema.ts";
import { deriveMessageId } from "./message-id.ts";
import { renderSubject, renderTemplate } from "./render-template.ts";
import { resolveRecipients } from "./resolve-recipients.ts";

/** A mail ready for a transport. Addresses are validated; header values contain no line breaks. */
export interface EmailMessage {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo?: string;
  subject: string;
  text: string;
  html?: string;
  /** With angle brackets. */
  messageId: string;
  date: Date;
  headers: Record<string, string>;
}

export type BuildEmailResult =
  | { ok: true; message: EmailMessage /** Event field values that were not addresses. */; skippedRecipients: number }
  | { ok: false; error: string };

/**
 * The destination's template for `type`: the exact type first, then the matching pattern with
 * the most literal characters, then the built-in default for the type, then the generic one.
 */
export function selectTemplate(templates: Readonly<Record<string, EmailTemplate>>, type: string): EmailTemplate {
  const exact = templates[type];
  if (exact && Object.hasOwn(templates, type)) return exact;
  let best: { template: EmailTemplate; weight: number } | undefined;
  for (const [pattern, template] of Object.entries(templates)) {
    if (!pattern.includes("*") || !compileTypePattern(pattern)(type)) continue;
    const weight = pattern.replaceAll("*", "").length;
    if (!best || weight > best.weight) best = { template, weight };
  }
  if (best) return best.template;
  return Object.hasOwn(DEFAULT_TEMPLATES, type) ? (DEFAULT_TEMPLATES[type] as EmailTemplate) : GENERIC_TEMPLATE;
}

/** An upstream-supplied string as a one-line header value. */
function toHeaderValue(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").slice(0, 200);
}

/** The mail of `record` for `destination`, or why none can be sent (a permanent condition). */
export function buildEmailMessage(destination: MailDestination, record: DeliverableRecord): BuildEmailResult {
  const { event } = record;
  // With a transform, its payload is what the templates render; recipients still come from the event.
  const context: unknown = record.transformed ? JSON.parse(record.transformed.json) : event;
  const recipients = resolveRecipients(destination, event);
  if (recipients.to.length === 0) {
    return {
      ok: false,
      error:
        destination.to.length + destination.toFields.length === 0
          ? "no recipients configured (set `to` or `toFields`)"
          : `no recipient address in the event (${recipients.skipped} value(s) were not e-mail addresses)`,
    };
  }
  const template = selectTemplate(destination.templates, event.type);
  const time = Date.parse(event.time);
  const message: EmailMessage = {
    from: destination.from,
    to: recipients.to,
    cc: destination.cc,
    bcc: destination.bcc,
    subject: renderSubject(template.subject, context),
    text: renderTemplate(template.text, context, "text"),
    messageId: deriveMessageId(event.id, destination.id, destination.messageIdDomain),
    date: new Date(Number.isNaN(time) ? record.receivedAt : time),
    headers: {
      "X-Gateway-Event-Id": toHeaderValue(event.id),
      "X-Gateway-Event-Type": toHeaderValue(event.type),
      // RFC 3834: a machine-generated notice; auto-responders must not answer it.
      "Auto-Submitted": "auto-generated",
    },
  };
  if (template.html !== undefined) message.html = guardUrlAttributes(renderTemplate(template.html, context, "html"));
  if (destination.replyTo) message.replyTo = destination.replyTo;
  return { ok: true, message, skippedRecipients: recipients.skipped };
}
