/**
 * The SMTP transport (nodemailer, pooled) behind the `email` destination on Node. nodemailer is
 * loaded on the first send. Failures become results: the server's reply code and the SMTP
 * command it answered are kept, the server's text is not (it may echo addresses or content).
 */
import type { NodemailerError, SMTPPoolOptions, Transporter } from "nodemailer";
import type { EmailMessage } from "../../src/delivery/email/build-email-message.ts";
import type { EmailDestination } from "../../src/delivery/email/email-destination-schema.ts";
import { createEmailSink } from "../../src/delivery/email/email-sink.ts";
import type { MailSendResult, MailTransportFactory } from "../../src/delivery/email/mail-transport.ts";
import type { SinkFactory } from "../../src/delivery/sink-contract.ts";

export interface SmtpOptions {
  host: string;
  /** Default 465 when `secure`, else 587. */
  port?: number;
  /** Implicit TLS. Default false (STARTTLS when offered). */
  secure?: boolean;
  /** Fail unless STARTTLS succeeds. Default false. */
  requireTLS?: boolean;
  /** Verify the server certificate. Default true. */
  tlsRejectUnauthorized?: boolean;
  auth?: { user: string; pass: string };
  /** Connect, greeting and idle-socket timeout, ms. Default 30000. */
  timeoutMs?: number;
  /** Pooled connections. Default 2. */
  maxConnections?: number;
}

const INVALID_MESSAGE_CODES = new Set(["EENVELOPE", "EMESSAGE", "EMAXRECIPIENTS", "ESTREAM"]);

/** Classifies a nodemailer error. */
function classify(error: NodemailerError): MailSendResult {
  const status = error.responseCode;
  const code = error.code ?? "unknown";
  if (code === "EAUTH" || code === "ENOAUTH")
    return { ok: false, failure: "auth", detail: code, ...withStatus(status) };
  if (status !== undefined) return { ok: false, failure: "rejected", status, detail: error.command ?? code };
  if (code === "ETIMEDOUT") return { ok: false, failure: "timeout", detail: error.timeoutType ?? code };
  if (INVALID_MESSAGE_CODES.has(code)) return { ok: false, failure: "invalid", detail: code };
  return { ok: false, failure: "unreachable", detail: error.originalCode ?? code };
}

function withStatus(status: number | undefined): { status?: number } {
  return status === undefined ? {} : { status };
}

function replyCode(response: unknown): number | undefined {
  const match = typeof response === "string" ? /^(\d{3})/.exec(response) : null;
  return match ? Number(match[1]) : undefined;
}

/** Creates a pooled SMTP transport. */
export const smtpTransport: MailTransportFactory<SmtpOptions> = (options) => {
  const timeoutMs = options.timeoutMs ?? 30_000;
  let transporter: Promise<Transporter> | undefined;
  let closed = false;

  const create = async () => {
    const { createTransport } = await import("nodemailer");
    const config: SMTPPoolOptions & { pool: true } = {
      pool: true,
      host: options.host,
      port: options.port ?? (options.secure ? 465 : 587),
      secure: options.secure ?? false,
      requireTLS: options.requireTLS ?? false,
      tls: { rejectUnauthorized: options.tlsRejectUnauthorized ?? true },
      maxConnections: options.maxConnections ?? 2,
      // One requeue covers a pooled connection the server closed while idle; further retries
      // are the delivery engine's, on its schedule.
      maxRequeues: 1,
      idleTimeout: 30_000,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      // Messages are plain strings built by the gateway; never let a value name a file or URL.
      disableFileAccess: true,
      disableUrlAccess: true,
      logger: false,
    };
    if (options.auth) config.auth = { user: options.auth.user, pass: options.auth.pass };
    return createTransport(config) as Transporter;
  };

  const send = async (message: EmailMessage): Promise<MailSendResult> => {
    try {
      transporter ??= create();
      const info = await (await transporter).sendMail({ ...message });
      const rejectedErrors = (info.rejectedErrors ?? []) as NodemailerError[];
      return {
        ok: true,
        ...withStatus(replyCode(info.response)),
        accepted: info.accepted?.length ?? 0,
        rejected: info.rejected?.length ?? 0,
        ...(rejectedErrors[0]?.responseCode === undefined ? {} : { rejectedStatus: rejectedErrors[0].responseCode }),
      };
    } catch (error) {
      return classify(error as NodemailerError);
    }
  };

  return {
    async send(message, signal) {
      if (closed) return { ok: false, failure: "unreachable", detail: "transport closed" };
      // nodemailer cannot cancel a send; an aborted attempt may still arrive (at least once,
      // same Message-ID), which is what the engine assumes of any abandoned attempt.
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<MailSendResult>((resolve) => {
        onAbort = () => resolve({ ok: false, failure: "aborted", detail: "signal" });
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        return await Promise.race([send(message), aborted]);
      } finally {
        if (onAbort) signal.removeEventListener("abort", onAbort);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      (await transporter?.catch(() => undefined))?.close();
    },
  };
};

/** The sink of an `email` destination with the SMTP transport. */
export const smtpEmailSink: SinkFactory<EmailDestination, void> = (destination) =>
  createEmailSink(destination, {
    transport: smtpTransport({
      host: destination.host,
      ...(destination.port === undefined ? {} : { port: destination.port }),
      secure: destination.secure,
      requireTLS: destination.requireTLS,
      tlsRejectUnauthorized: destination.tlsRejectUnauthorized,
      ...(destination.auth ? { auth: destination.auth } : {}),
      timeoutMs: destination.timeoutMs,
      maxConnections: destination.maxConnections,
    }),
  });
