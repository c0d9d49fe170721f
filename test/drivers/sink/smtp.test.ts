/** The sink conformance suite for the email sink against a real SMTP server. */
import { afterAll, beforeAll, expect } from "vitest";
import { smtpEmailSink } from "../../../adapters/sink/smtp.ts";
import { testSinkDriver } from "../../conformance/sink-conformance.ts";
import { findFreePort } from "../../helpers/redis-server.ts";
import { type SmtpTestServer, startSmtpServer } from "../../helpers/smtp-server.ts";

let server: SmtpTestServer;
let deadPort: number;

beforeAll(async () => {
  server = await startSmtpServer();
  deadPort = await findFreePort();
});
afterAll(async () => {
  await server?.close();
});

testSinkDriver(
  "email (smtp)",
  (kind) =>
    smtpEmailSink({
      id: "ops-mail",
      type: "email",
      transport: "smtp",
      host: "127.0.0.1",
      allowPrivateNetworks: true,
      port: kind === "reachable" ? server.port : deadPort,
      secure: false,
      requireTLS: false,
      tlsRejectUnauthorized: true,
      from: "gateway@example.com",
      to: ["ops@example.com"],
      cc: [],
      bcc: [],
      toFields: [],
      templates: {},
      messageIdDomain: "gateway",
      timeoutMs: 5_000,
      maxConnections: 2,
    }),
  async (eventId) =>
    server.messages
      .filter((mail) => mail.parsed.headers.get("x-gateway-event-id") === eventId)
      .map((mail) => {
        // The Message-ID alone identifies the event: `<{eventId}.{destinationId}@gateway>`.
        expect(mail.parsed.messageId).toBe(`<${eventId}.ops-mail@gateway>`);
        return { eventId, type: String(mail.parsed.headers.get("x-gateway-event-type")) };
      }),
);
