/**
 * The email sink: one attempt builds the event's mail and hands it to a mail transport.
 * Outcome mapping (RFC 5321 reply classes): 4xx replies and connection failures retry; 5xx
 * replies are permanent (dead letter now), except 503 (bad command sequence, a session problem,
 * not a verdict on the message). Refused credentials retry: the message is fine and the
 * operator's fix should let the pending deliveries through. An address the SSRF guard refuses is
 * permanent, as for `http` destinations. Never throws.
 */
import { createSink, type DeliveryAttemptResult, type Sink, type SinkFactory } from "../sink-contract.ts";
import { buildEmailMessage } from "./build-email-message.ts";
import type { EmailDestination } from "./email-destination-schema.ts";
import type { HttpEmailDestination } from "./http-email-destination-schema.ts";
import type { MailSendResult, MailTransport } from "./mail-transport.ts";

export interface EmailSinkDeps {
  /** The mail backend (e.g. `smtpTransport`). The sink closes it on `close`. */
  transport: MailTransport;
}

/** True for reply codes that a retry of the same message would get again. */
export function isPermanentReply(status: number): boolean {
  return status >= 500 && status < 600 && status !== 503;
}

/** Maps a transport outcome to the delivery result the engine acts on. */
export function toEmailAttemptResult(outcome: MailSendResult): DeliveryAttemptResult {
  if (outcome.ok) {
    const result: DeliveryAttemptResult = { ok: true };
    if (outcome.status !== undefined) result.status = outcome.status;
    if (outcome.rejected > 0) {
      const code = outcome.rejectedStatus === undefined ? "" : ` (${outcome.rejectedStatus})`;
      result.error = `${outcome.rejected} of ${outcome.accepted + outcome.rejected} recipients refused${code}`;
    }
    return result;
  }
  const result: DeliveryAttemptResult = { ok: false };
  if (outcome.status !== undefined) result.status = outcome.status;
  switch (outcome.failure) {
    case "rejected":
      if (outcome.status !== undefined && isPermanentReply(outcome.status)) result.permanent = true;
      result.error = `SMTP server refused the message at ${outcome.detail} (${outcome.status ?? "no code"})`;
      break;
    case "auth":
      result.error = `SMTP server refused the credentials (${outcome.status ?? outcome.detail})`;
      break;
    case "invalid":
      result.permanent = true;
      result.error = `message could not be sent (${outcome.detail})`;
      break;
    case "timeout":
      result.error = `SMTP server timed out (${outcome.detail})`;
      break;
    case "aborted":
      result.error = "attempt aborted";
      break;
    case "unreachable":
      result.error = `SMTP server unreachable (${outcome.detail})`;
      break;
    case "refused":
      result.permanent = true;
      result.error = `refused by the SSRF guard (${outcome.detail})`;
      break;
  }
  return result;
}

/** Creates the sink of one `email` destination. */
export const createEmailSink: SinkFactory<EmailDestination | HttpEmailDestination, EmailSinkDeps> = (
  destination,
  { transport },
): Sink =>
  createSink(
    destination.id,
    "mail",
    async (record, signal, info) => {
      const built = buildEmailMessage(destination, record, info?.trace);
      if (!built.ok) return { ok: false, permanent: true, error: built.error };
      const result = toEmailAttemptResult(await transport.send(built.message, signal));
      if (result.ok && built.skippedRecipients > 0 && !result.error) {
        result.error = `${built.skippedRecipients} recipient field value(s) were not e-mail addresses`;
      }
      return result;
    },
    () => transport.close(),
  );
