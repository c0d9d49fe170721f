/**
 * The `email` destination over an HTTP mail API (`transport: "http-email"`): the same sender,
 * recipients, templates and Message-ID as the SMTP one (email-destination-schema.ts), sent as
 * one provider-neutral JSON POST with a bearer key (adapters/sink/http-email.ts). The only
 * e-mail transport on Workers, where SMTP is not available; usable on Node as well.
 */
import * as v from "valibot";
import { httpUrlWithoutCredentials } from "../http/http-url-schema.ts";
import { EmailDestinationSchema } from "./email-destination-schema.ts";

/** The SMTP-only fields, which an HTTP mail destination does not have. */
const SMTP_FIELDS = [
  "transport",
  "host",
  "port",
  "secure",
  "requireTLS",
  "tlsRejectUnauthorized",
  "auth",
  "maxConnections",
] as const;

const MailEntries = v.omit(EmailDestinationSchema, SMTP_FIELDS).entries;

/** `https://` (or `http://` for a local relay) without credentials in the URL. */
const apiUrl = httpUrlWithoutCredentials(
  "an http(s) URL such as https://api.mail.example.com/v1/send (credentials in apiKey)",
);

export const HttpEmailDestinationSchema = v.strictObject({
  ...MailEntries,
  transport: v.literal("http-email"),
  /** The provider's send endpoint: one POST per mail. */
  url: apiUrl,
  /** Bearer key of the mail API; take it from the environment (`"${MAIL_API_KEY}"`). */
  apiKey: v.pipe(v.string(), v.minLength(1), v.maxLength(4096)),
});

export type HttpEmailDestination = v.InferOutput<typeof HttpEmailDestinationSchema>;

/** What building a mail needs from an email destination, whatever its transport. */
export type MailDestination = Omit<HttpEmailDestination, "transport" | "url" | "apiKey">;
