/**
 * The contract of a mail transport: sends one message and says how it went, without throwing.
 * SMTP (nodemailer) lives in adapters/transports/smtp.ts; an HTTP mail API for Workers would
 * implement the same interface, so the email sink stays the same.
 */
import type { EmailMessage } from "./build-email-message.ts";

export type MailSendResult =
  | {
      ok: true;
      /** Final reply code (SMTP 250). */
      status?: number;
      accepted: number;
      /** Recipients the server refused while accepting the others. */
      rejected: number;
      /** Reply code of the first refused recipient. */
      rejectedStatus?: number;
    }
  | {
      ok: false;
      /**
       * `unreachable`/`timeout`: no conversation; `auth`: credentials refused; `rejected`: the
       * server answered the message (envelope or data) with an error; `invalid`: the message
       * could not be handed over at all; `aborted`: the engine gave up on the attempt;
       * `refused`: the SSRF guard refused the server's address (detail: why).
       */
      failure: "unreachable" | "timeout" | "auth" | "rejected" | "invalid" | "aborted" | "refused";
      /** The server's reply code, when it replied. */
      status?: number;
      /** Short, secret-free detail: an error code or the SMTP command that failed. */
      detail: string;
    };

export interface MailTransport {
  /** Sends one message; resolves with the outcome, never rejects. */
  send(message: EmailMessage, signal: AbortSignal): Promise<MailSendResult>;
  /** Closes pooled connections. Idempotent. */
  close(): Promise<void>;
}

/** A typed factory per mail backend. */
export type MailTransportFactory<Options> = (options: Options) => MailTransport;
