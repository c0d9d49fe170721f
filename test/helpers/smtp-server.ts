/**
 * A real SMTP server (smtp-server) on a free 127.0.0.1 port for tests: collects every message,
 * parsed with mailparser, with its envelope. Tests can make it refuse recipients or message
 * data with chosen reply codes, and can require credentials.
 */
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  parsed: ParsedMail;
}

export interface SmtpRejection {
  code: number;
  message: string;
}

export interface SmtpTestServer {
  host: "127.0.0.1";
  port: number;
  /** Every accepted message, in arrival order. */
  messages: ReceivedMail[];
  /** When set and returning a rejection, RCPT TO for that address is refused. */
  rejectRecipient?: ((address: string) => SmtpRejection | undefined) | undefined;
  /** When set and returning a rejection, the message is refused after DATA. */
  rejectData?: (() => SmtpRejection | undefined) | undefined;
  /** Resolves once `count` messages arrived in total; rejects after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export interface SmtpTestServerOptions {
  /** Require these credentials (AUTH PLAIN/LOGIN without TLS, loopback only). Default: no AUTH. */
  auth?: { user: string; pass: string };
}

function reply(rejection: SmtpRejection): Error {
  return Object.assign(new Error(rejection.message), { responseCode: rejection.code });
}

/** Starts the server and resolves once it listens. */
export async function startSmtpServer(options: SmtpTestServerOptions = {}): Promise<SmtpTestServer> {
  const waiters = new Set<() => void>();
  const state: SmtpTestServer = {
    host: "127.0.0.1",
    port: 0,
    messages: [],
    waitForMessages(count, timeoutMs = 10_000) {
      if (state.messages.length >= count) return Promise.resolve(state.messages);
      return new Promise((resolve, reject) => {
        const check = () => {
          if (state.messages.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(state.messages);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} messages, got ${state.messages.length} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: async () => {},
  };

  const config: SMTPServerOptions = {
    secure: false,
    logger: false,
    // Clients that kept a pooled connection open must not hold a test's teardown for 30 s.
    closeTimeout: 1_000,
    // No reverse DNS of 127.0.0.1 per connection: tests stay off the network and fast.
    disableReverseLookup: true,
    disabledCommands: options.auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === options.auth?.user && auth.password === options.auth?.pass) {
        callback(null, { user: auth.username });
      } else callback(reply({ code: 535, message: "Authentication credentials invalid" }));
    },
    onRcptTo(address, _session, callback) {
      const rejection = state.rejectRecipient?.(address.address);
      callback(rejection ? reply(rejection) : undefined);
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          const rejection = state.rejectData?.();
          if (rejection) return callback(reply(rejection));
          const mailFrom = session.envelope.mailFrom;
          state.messages.push({
            envelope: {
              from: mailFrom ? mailFrom.address : "",
              to: session.envelope.rcptTo.map((r) => r.address),
            },
            parsed,
          });
          callback(null);
          for (const waiter of [...waiters]) waiter();
        },
        (error: Error) => callback(error),
      );
    },
  };
  const server = new SMTPServer(config);
  server.listen(0, "127.0.0.1");
  await once(server.server, "listening");
  state.port = (server.server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  state.close = () => {
    closing ??= new Promise<void>((resolve) => server.close(() => resolve()));
    return closing;
  };
  return state;
}
