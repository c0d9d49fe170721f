/**
 * The SMTP transport (nodemailer, pooled) behind the `email` destination on Node. nodemailer is
 * loaded on the first send. Failures become results: the server's reply code and the SMTP
 * command it answered are kept, the server's text is not (it may echo addresses or content).
 *
 * The SSRF guard applies as for `http` destinations: every send resolves `host` with the guarded
 * lookup (adapters/sink/guarded-lookup.ts) and nodemailer connects to that checked address, never
 * to the name (TLS still verifies and sends SNI for the name). When the name starts resolving to
 * another address, a new pool is opened for it and the old one closes once its sends finished.
 */
import type { NodemailerError, SMTPPoolOptions, Transporter } from "nodemailer";
import type { EmailMessage } from "../../src/delivery/email/build-email-message.ts";
import type { EmailDestination } from "../../src/delivery/email/email-destination-schema.ts";
import { createEmailSink } from "../../src/delivery/email/email-sink.ts";
import type { MailSendResult, MailTransportFactory } from "../../src/delivery/email/mail-transport.ts";
import type { SinkFactory } from "../../src/delivery/sink-contract.ts";
import type { AddressPolicy } from "../../src/ssrf/address-policy.ts";
import { parseIp } from "../../src/ssrf/parse-ip-address.ts";
import { type ResolveAll, resolveGuarded, SSRF_REFUSED } from "./guarded-lookup.ts";

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
  /** The SSRF guard's policy for the addresses `host` resolves to. Default: public addresses only. */
  policy?: AddressPolicy;
  /** Default: the system resolver (tests simulate others). */
  resolve?: ResolveAll;
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

/** One nodemailer pool, connected to one checked address, with its sends in flight. */
interface Pool {
  address: string;
  transporter: Promise<Transporter>;
  inFlight: number;
  retired: boolean;
}

/** Creates a pooled SMTP transport. */
export const smtpTransport: MailTransportFactory<SmtpOptions> = (options) => {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const policy = options.policy ?? {};
  /** SNI and certificate checks use the configured name, not the address connected to. */
  const servername = parseIp(options.host.replace(/^\[|\]$/g, "")) ? undefined : options.host;
  let current: Pool | undefined;
  let closed = false;

  const create = async (address: string) => {
    const { createTransport } = await import("nodemailer");
    const config: SMTPPoolOptions & { pool: true } = {
      pool: true,
      host: address,
      port: options.port ?? (options.secure ? 465 : 587),
      secure: options.secure ?? false,
      requireTLS: options.requireTLS ?? false,
      tls: {
        rejectUnauthorized: options.tlsRejectUnauthorized ?? true,
        ...(servername ? { servername } : {}),
      },
      ...(servername ? { servername } : {}),
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

  const closePool = (pool: Pool) => {
    void pool.transporter.then(
      (transporter) => transporter.close(),
      () => {},
    );
  };

  /** The pool for the address `host` resolves to now; the previous one retires when idle. */
  const poolFor = (address: string): Pool => {
    if (current?.address === address) return current;
    const previous = current;
    current = { address, transporter: create(address), inFlight: 0, retired: false };
    if (previous) {
      previous.retired = true;
      if (previous.inFlight === 0) closePool(previous);
    }
    return current;
  };

  const send = async (message: EmailMessage): Promise<MailSendResult> => {
    let address: string;
    try {
      address = (await resolveGuarded(options.host.replace(/^\[|\]$/g, ""), policy, options.resolve)).address;
    } catch (error) {
      const { code, message: text } = error as { code?: string; message?: string };
      if (code === SSRF_REFUSED) return { ok: false, failure: "refused", detail: text ?? "refused" };
      return { ok: false, failure: "unreachable", detail: code ?? "EDNS" };
    }
    if (closed) return { ok: false, failure: "unreachable", detail: "transport closed" };
    const pool = poolFor(address);
    pool.inFlight++;
    try {
      const info = await (await pool.transporter).sendMail({ ...message });
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
    } finally {
      pool.inFlight--;
      if (pool.retired && pool.inFlight === 0) closePool(pool);
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
      (await current?.transporter.catch(() => undefined))?.close();
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
      policy: { allowPrivateNetworks: destination.allowPrivateNetworks, allowCidrs: destination.allowCidrs },
    }),
  });
