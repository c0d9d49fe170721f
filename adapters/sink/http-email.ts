/**
 * The `http-email` mail transport: one JSON POST per mail to a transactional mail API, with
 * `Authorization: Bearer <apiKey>`, shaped like the common providers' send endpoints:
 *   { "from", "to": [...], "cc": [...], "bcc": [...], "reply_to"?, "subject", "text", "html"?,
 *     "headers": { "Message-ID", ... } }
 * and `Idempotency-Key: <Message-ID>` so a provider that honours it drops a retried copy.
 * Web standards only (`fetch`), so the same transport serves Node and Workers.
 *
 * Outcomes: 2xx sent; 401/403 `auth` (retried: a rotated key may be fixed); 400/413/422
 * `invalid` (the provider refused this message: dead letter); 408/429/5xx and network errors
 * are retried. The provider's answer body is never kept (it may echo addresses or content).
 * A URL whose host is an IP address the destination's SSRF policy refuses (`allowPrivateNetworks`,
 * `allowCidrs`) is refused before any request, on Node and Workers (src/ssrf/refuse-ip-literal.ts).
 */
import type { EmailMessage } from "../../src/delivery/email/build-email-message.ts";
import { createEmailSink } from "../../src/delivery/email/email-sink.ts";
import type { HttpEmailDestination } from "../../src/delivery/email/http-email-destination-schema.ts";
import type { MailSendResult, MailTransport } from "../../src/delivery/email/mail-transport.ts";
import type { Sink, SinkFactory } from "../../src/delivery/sink-contract.ts";
import { fetchWithDeadline } from "../../src/http/fetch-with-deadline.ts";
import type { AddressPolicy } from "../../src/ssrf/address-policy.ts";
import { createLiteralRefusal } from "../../src/ssrf/refuse-ip-literal.ts";

export interface HttpEmailOptions {
  url: string;
  apiKey: string;
  /** Bound of one attempt, ms. Default 30000. */
  timeoutMs?: number;
  /** The SSRF guard's policy for an IP literal in `url`. Default: public addresses only. */
  policy?: AddressPolicy;
}

/** The provider-neutral JSON body of one mail. */
export function toMailApiBody(message: EmailMessage): Record<string, unknown> {
  const body: Record<string, unknown> = {
    from: message.from,
    to: message.to,
    cc: message.cc,
    bcc: message.bcc,
    subject: message.subject,
    text: message.text,
    headers: { ...message.headers, "Message-ID": message.messageId, Date: message.date.toUTCString() },
  };
  if (message.replyTo) body.reply_to = message.replyTo;
  if (message.html !== undefined) body.html = message.html;
  return body;
}

const INVALID_STATUSES = new Set([400, 413, 422]);

/** Classifies the provider's status. */
export function classifyMailApiStatus(status: number, recipients: number): MailSendResult {
  if (status >= 200 && status < 300) return { ok: true, accepted: recipients, rejected: 0 };
  if (status === 401 || status === 403) return { ok: false, failure: "auth", detail: `HTTP ${status}` };
  if (INVALID_STATUSES.has(status)) return { ok: false, failure: "invalid", detail: `HTTP ${status}` };
  // No SMTP reply code here: `rejected` without a status is retried by the email sink.
  return { ok: false, failure: "rejected", detail: `HTTP ${status}` };
}

/** Creates the transport. */
export function httpEmailTransport(options: HttpEmailOptions): MailTransport {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const literalRefusal = createLiteralRefusal(options.policy ?? {});
  return {
    async send(message, signal): Promise<MailSendResult> {
      const refusal = literalRefusal(options.url);
      if (refusal) return { ok: false, failure: "refused", detail: refusal };
      const outcome = await fetchWithDeadline(
        options.url,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${options.apiKey}`,
            "content-type": "application/json",
            "idempotency-key": message.messageId,
          },
          body: JSON.stringify(toMailApiBody(message)),
          redirect: "manual",
        },
        { signal, timeoutMs },
      );
      if (!outcome.ok) {
        if (outcome.failure === "timeout")
          return { ok: false, failure: "timeout", detail: `no answer within ${timeoutMs} ms` };
        if (outcome.failure === "aborted") return { ok: false, failure: "aborted", detail: "aborted" };
        const detail = outcome.error instanceof Error ? outcome.error.name : "Error";
        return { ok: false, failure: "unreachable", detail };
      }
      await outcome.response.body?.cancel().catch(() => {});
      return classifyMailApiStatus(outcome.response.status, message.to.length + message.cc.length + message.bcc.length);
    },
    close: async () => {},
  };
}

/** The `email` sink over the HTTP mail API (Node and Workers): transport name `http-email`. */
export const httpEmailSink: SinkFactory<HttpEmailDestination, unknown> = (destination): Sink =>
  createEmailSink(destination, {
    transport: httpEmailTransport({
      url: destination.url,
      apiKey: destination.apiKey,
      timeoutMs: destination.timeoutMs,
      policy: { allowPrivateNetworks: destination.allowPrivateNetworks, allowCidrs: destination.allowCidrs },
    }),
  });
