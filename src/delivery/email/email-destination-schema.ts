/**
 * The `email` destination: each routed event becomes one mail, sent over SMTP (nodemailer on
 * Node). Subject, text and HTML come from templates with placeholders (render-template.ts),
 * per destination and event-type pattern, with built-in defaults for the notable events of both
 * services. Recipients are static, taken from event fields, or both. The Message-ID is derived
 * from the event id, so a repeated delivery is recognisable as the same mail.
 * Give each route its own email destination when routes need different templates or recipients.
 */
import * as v from "valibot";
import { AddressPolicyEntries } from "../../ssrf/address-policy-schema.ts";
import { DeliveryPolicyEntries } from "../delivery-policy.ts";
import { PATH_PATTERN } from "./read-event-path.ts";
import { findTemplateProblem } from "./render-template.ts";

const id = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or -"));

/** One e-mail address (the same check applies to addresses read from events). */
export const EmailAddressSchema = v.pipe(v.string(), v.maxLength(254), v.email("an e-mail address"));

/** `ops@example.com` or `Gateway <ops@example.com>`. */
const mailbox = v.pipe(
  v.string(),
  v.maxLength(320),
  v.check((value) => {
    const match = /^(?:([^<>"\r\n]*)<([^<>\s]+)>|([^<>\s]+))$/.exec(value.trim());
    return match !== null && v.is(EmailAddressSchema, match[2] ?? match[3]);
  }, "an address such as ops@example.com or Gateway <ops@example.com>"),
);

const template = v.pipe(
  v.string(),
  v.maxLength(100_000),
  v.check(
    (value) => findTemplateProblem(value) === undefined,
    'placeholders of the form {{ path }} or {{ path | other.path | "fallback" }}',
  ),
);

export const EmailTemplateSchema = v.strictObject({
  /** Subject line; line breaks from event values become spaces. */
  subject: v.pipe(template, v.maxLength(1_000)),
  /** Plain-text body. */
  text: template,
  /** HTML body; event values are HTML-escaped. Omit for a text-only mail. */
  html: v.optional(template),
});

const typePattern = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_.*-]{1,200}$/, "an event-type pattern such as agreement.*"),
);
const dotPath = v.pipe(v.string(), v.regex(PATH_PATTERN, "a dot path such as data.participant.email"));

export const EmailDestinationSchema = v.strictObject({
  id,
  type: v.literal("email"),
  /** Mail transport. `smtp` (default) on Node. */
  transport: v.optional(v.literal("smtp"), "smtp"),
  /**
   * SMTP server host name or address. The SSRF guard checks the address it connects to, as for
   * `http` destinations: a loopback or private relay needs `allowPrivateNetworks` or `allowCidrs`.
   */
  host: v.pipe(v.string(), v.minLength(1), v.maxLength(253)),
  /** SMTP port. Default 465 when `secure`, else 587. */
  port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65_535))),
  /** TLS from the first byte (port 465). Default false: STARTTLS when the server offers it. */
  secure: v.optional(v.boolean(), false),
  /** Refuse to send unless STARTTLS succeeds. Default false. */
  requireTLS: v.optional(v.boolean(), false),
  /** Verify the server's certificate. Default true; turn off only for a local relay. */
  tlsRejectUnauthorized: v.optional(v.boolean(), true),
  /** SMTP credentials; take them from the environment (`"${SMTP_PASSWORD}"`). Default none. */
  auth: v.optional(
    v.strictObject({ user: v.pipe(v.string(), v.minLength(1)), pass: v.pipe(v.string(), v.minLength(1)) }),
  ),
  /** Sender: `ops@example.com` or `Gateway <ops@example.com>`. */
  from: mailbox,
  /** Reply-To address. Default none. */
  replyTo: v.optional(EmailAddressSchema),
  /** Static recipients. Default none. */
  to: v.optional(v.pipe(v.array(EmailAddressSchema), v.maxLength(50)), []),
  cc: v.optional(v.pipe(v.array(EmailAddressSchema), v.maxLength(50)), []),
  bcc: v.optional(v.pipe(v.array(EmailAddressSchema), v.maxLength(50)), []),
  /**
   * Event fields holding recipients (`data.participant.email`, `data.participants.*.email`).
   * Each value found must be an e-mail address; others are skipped. Default none.
   * Every mail needs at least one recipient from `to` or these fields.
   */
  toFields: v.optional(v.pipe(v.array(dotPath), v.maxLength(10)), []),
  /**
   * Templates by event-type pattern (`agreement.completed`, `candidate.*`, `*`). An exact type
   * wins over a pattern, a longer pattern over a shorter one; events no template matches get
   * the built-in default for their type. Default none.
   */
  templates: v.optional(v.record(typePattern, EmailTemplateSchema), {}),
  /** Right-hand side of the Message-ID `<{eventId}.{destinationId}@{domain}>`. Default `gateway`. */
  messageIdDomain: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/, "a domain such as gateway.example.com")),
    "gateway",
  ),
  /** Bound of one attempt (connect, greeting, each reply), ms. Default 30000. */
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1_000), v.maxValue(300_000)), 30_000),
  /** Pooled SMTP connections. Default 2. */
  maxConnections: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(20)), 2),
  /**
   * The SSRF guard's exceptions for the SMTP host (or the mail API's URL with `http-email`):
   * `allowPrivateNetworks` (default false) and `allowCidrs`, as for `http` destinations.
   */
  ...AddressPolicyEntries,
  /** Retry schedule, breaker, concurrency, rate limit and ordering (see delivery-policy.ts). */
  ...DeliveryPolicyEntries,
});

export type EmailDestination = v.InferOutput<typeof EmailDestinationSchema>;
export type EmailTemplate = v.InferOutput<typeof EmailTemplateSchema>;
