/**
 * The email sink against a real SMTP server (smtp-server), the received mail parsed with
 * mailparser: content, recipients, Message-ID, credentials, and how SMTP replies map to retry
 * (4xx, connection failures) or dead letter (5xx).
 */
import * as v from "valibot";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { smtpEmailSink, smtpTransport } from "../../../adapters/sink/smtp.ts";
import { buildEmailMessage, type EmailMessage } from "../../../src/delivery/email/build-email-message.ts";
import { EmailDestinationSchema } from "../../../src/delivery/email/email-destination-schema.ts";
import { toEmailAttemptResult } from "../../../src/delivery/email/email-sink.ts";
import type { MailSendResult } from "../../../src/delivery/email/mail-transport.ts";
import type { Sink } from "../../../src/delivery/sink-contract.ts";
import { buildEsignBody } from "../../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../../src/services/staffing/staffing-samples.ts";
import { makeTestRecord } from "../../conformance/sink-conformance.ts";
import { findFreePort } from "../../helpers/redis-server.ts";
import { type SmtpTestServer, startSmtpServer } from "../../helpers/smtp-server.ts";

let server: SmtpTestServer;
const sinks: Sink[] = [];
const live = () => new AbortController().signal;

function openSink(patch: Record<string, unknown> = {}, port = server.port): Sink {
  const destination = v.parse(EmailDestinationSchema, {
    id: "ops-mail",
    type: "email",
    host: "127.0.0.1",
    allowPrivateNetworks: true,
    port,
    from: "Gateway <gateway@example.com>",
    to: ["ops@example.com"],
    timeoutMs: 5_000,
    ...patch,
  });
  const sink = smtpEmailSink(destination);
  sinks.push(sink);
  return sink;
}

/** The mail of one event, built as the sink builds it. */
function buildMessage(): EmailMessage {
  const destination = v.parse(EmailDestinationSchema, {
    id: "ops-mail",
    type: "email",
    host: "mail.example.test",
    from: "gateway@example.com",
    to: ["ops@example.com"],
  });
  const built = buildEmailMessage(destination, completed());
  if (!built.ok) throw new Error(built.error);
  return built.message;
}

const completed = () =>
  makeTestRecord({
    type: "agreement.completed",
    subject: "agreements/8d5f",
    data: buildEsignBody("agreement.completed"),
  });

beforeAll(async () => {
  server = await startSmtpServer();
});
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
  server.rejectRecipient = undefined;
  server.rejectData = undefined;
  server.messages.length = 0;
});
afterAll(async () => {
  await server?.close();
});

describe("delivered mail", () => {
  it("arrives with subject, text, HTML, recipients, Message-ID and event headers", async () => {
    const record = completed();
    const result = await openSink({ cc: ["audit@example.com"], bcc: ["archive@example.com"] }).deliver(record, live());
    expect(result).toEqual({ ok: true, status: 250 });
    const [mail] = server.messages;
    const parsed = mail?.parsed;
    expect(parsed?.subject).toBe("Agreement completed: crm-deal-4711");
    expect(parsed?.text).toContain("Participants: Anna Svensson, Erik Lind");
    expect(parsed?.html).toContain("<h2");
    expect(parsed?.html).toContain("Anna Svensson, Erik Lind");
    expect(parsed?.from?.value).toEqual([{ address: "gateway@example.com", name: "Gateway" }]);
    expect(parsed?.to && !Array.isArray(parsed.to) ? parsed.to.value.map((a) => a.address) : []).toEqual([
      "ops@example.com",
    ]);
    expect(parsed?.messageId).toBe(`<${record.id}.ops-mail@gateway>`);
    expect(parsed?.headers.get("x-gateway-event-id")).toBe(record.id);
    expect(parsed?.headers.get("auto-submitted")).toBe("auto-generated");
    expect(parsed?.headers.has("bcc")).toBe(false);
    expect(mail?.envelope).toEqual({
      from: "gateway@example.com",
      to: ["ops@example.com", "audit@example.com", "archive@example.com"],
    });
  });

  it("sends to addresses taken from event fields", async () => {
    const sink = openSink({ to: [], toFields: ["data.participants.*.email"] });
    expect((await sink.deliver(completed(), live())).ok).toBe(true);
    expect(server.messages[0]?.envelope.to).toEqual(["anna.svensson@example.com", "erik.lind@example.com"]);
  });

  it("renders a destination template with escaped HTML values", async () => {
    const data = { ...buildStaffingBody("candidate.accepted"), candidate: { id: "c1", name: "Karin <b>Berg</b>" } };
    const record = makeTestRecord({ type: "candidate.accepted", service: "staffing", data });
    const sink = openSink({
      templates: {
        "candidate.*": {
          subject: "{{data.candidate.name}} said yes",
          text: "Answer: {{data.result.answer}}",
          html: "<p>{{data.candidate.name}}: {{data.result.answer}}</p>",
        },
      },
    });
    expect((await sink.deliver(record, live())).ok).toBe(true);
    const parsed = server.messages[0]?.parsed;
    expect(parsed?.subject).toBe("Karin <b>Berg</b> said yes");
    expect(parsed?.text?.trim()).toBe("Answer: Ja, jag kan ta passet.");
    expect(parsed?.html).toBe("<p>Karin &#60;b&#62;Berg&#60;/b&#62;: Ja, jag kan ta passet.</p>");
  });

  it("a repeated delivery carries the same Message-ID", async () => {
    const record = completed();
    const sink = openSink();
    await sink.deliver(record, live());
    await sink.deliver(record, live());
    const ids = server.messages.map((m) => m.parsed.messageId);
    expect(ids).toEqual([`<${record.id}.ops-mail@gateway>`, `<${record.id}.ops-mail@gateway>`]);
  });
});

describe("SMTP replies", () => {
  it.each([
    [
      "4xx at RCPT TO retries",
      () => (server.rejectRecipient = () => ({ code: 450, message: "Mailbox busy" })),
      450,
      false,
    ],
    [
      "5xx at RCPT TO is permanent",
      () => (server.rejectRecipient = () => ({ code: 550, message: "No such user" })),
      550,
      true,
    ],
    ["4xx after DATA retries", () => (server.rejectData = () => ({ code: 451, message: "Try later" })), 451, false],
    ["5xx after DATA is permanent", () => (server.rejectData = () => ({ code: 554, message: "Rejected" })), 554, true],
  ])("%s", async (_, arrange, status, permanent) => {
    arrange();
    const result = await openSink().deliver(completed(), live());
    expect(result).toMatchObject({ ok: false, status, error: expect.stringMatching(String(status)) });
    expect(result.permanent === true).toBe(permanent);
    expect(result.error).not.toMatch(/busy|No such user|Try later|Rejected/);
    expect(server.messages).toHaveLength(0);
  });

  it("one refused recipient among several: delivered to the others, the refusal noted", async () => {
    server.rejectRecipient = (address) =>
      address === "gone@example.com" ? { code: 550, message: "No such user" } : undefined;
    const result = await openSink({ to: ["ops@example.com", "gone@example.com"] }).deliver(completed(), live());
    expect(result).toEqual({ ok: true, status: 250, error: "1 of 2 recipients refused (550)" });
    expect(server.messages[0]?.envelope.to).toEqual(["ops@example.com"]);
  });

  it("an unreachable server is a retryable failure", async () => {
    const result = await openSink({}, await findFreePort()).deliver(completed(), live());
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/unreachable \(ECONNREFUSED\)/) });
    expect(result.permanent).toBeUndefined();
  });
});

describe("credentials", () => {
  let guarded: SmtpTestServer;
  beforeAll(async () => {
    guarded = await startSmtpServer({ auth: { user: "gateway", pass: "smtp-pass-4711-secret" } });
  });
  afterAll(async () => {
    await guarded?.close();
  });

  it("authenticates with the configured credentials", async () => {
    const sink = openSink({ auth: { user: "gateway", pass: "smtp-pass-4711-secret" } }, guarded.port);
    expect((await sink.deliver(completed(), live())).ok).toBe(true);
    expect(guarded.messages).toHaveLength(1);
  });

  it("refused credentials retry (the message is fine) and the error names no secret", async () => {
    const sink = openSink({ auth: { user: "gateway", pass: "wrong-pass-secret" } }, guarded.port);
    const result = await sink.deliver(completed(), live());
    expect(result).toMatchObject({ ok: false, status: 535 });
    expect(result.permanent).toBeUndefined();
    expect(JSON.stringify(result)).not.toContain("wrong-pass-secret");
  });
});

describe("outcome mapping", () => {
  it.each<[MailSendResult, { ok: boolean; permanent?: boolean; status?: number }]>([
    [
      { ok: true, status: 250, accepted: 1, rejected: 0 },
      { ok: true, status: 250 },
    ],
    [
      { ok: false, failure: "rejected", status: 421, detail: "MAIL FROM" },
      { ok: false, status: 421 },
    ],
    [
      { ok: false, failure: "rejected", status: 452, detail: "RCPT TO" },
      { ok: false, status: 452 },
    ],
    [
      { ok: false, failure: "rejected", status: 503, detail: "DATA" },
      { ok: false, status: 503 },
    ],
    [
      { ok: false, failure: "rejected", status: 552, detail: "DATA" },
      { ok: false, status: 552, permanent: true },
    ],
    [
      { ok: false, failure: "auth", status: 535, detail: "EAUTH" },
      { ok: false, status: 535 },
    ],
    [{ ok: false, failure: "timeout", detail: "GREETING_TIMEOUT" }, { ok: false }],
    [{ ok: false, failure: "unreachable", detail: "ECONNRESET" }, { ok: false }],
    [
      { ok: false, failure: "invalid", detail: "EENVELOPE" },
      { ok: false, permanent: true },
    ],
    [{ ok: false, failure: "aborted", detail: "signal" }, { ok: false }],
  ])("%j", (outcome, expected) => {
    const result = toEmailAttemptResult(outcome);
    expect({ ok: result.ok, status: result.status, permanent: result.permanent }).toEqual({
      ok: expected.ok,
      status: expected.status,
      permanent: expected.permanent,
    });
  });
});

describe("SSRF guard on the SMTP host", () => {
  it("refuses a loopback server without allowPrivateNetworks: a permanent failure, nothing sent", async () => {
    const result = await openSink({ allowPrivateNetworks: false }).deliver(completed(), live());
    expect(result).toEqual({
      ok: false,
      permanent: true,
      error: "refused by the SSRF guard (127.0.0.1 resolves to a loopback address)",
    });
    expect(server.messages).toHaveLength(0);
  });

  it("refuses localhost too, and an address spelled as IPv4-mapped IPv6", async () => {
    for (const host of ["localhost", "::ffff:127.0.0.1"]) {
      const result = await openSink({ host, allowPrivateNetworks: false }).deliver(completed(), live());
      expect(result).toMatchObject({ ok: false, permanent: true });
      expect(result.error).toMatch(/^refused by the SSRF guard \(.* resolves to a loopback address/);
    }
    expect(server.messages).toHaveLength(0);
  });

  it("allowCidrs opens exactly the listed range", async () => {
    const allowed = await openSink({ allowPrivateNetworks: false, allowCidrs: ["127.0.0.1/32"] }).deliver(
      completed(),
      live(),
    );
    expect(allowed).toEqual({ ok: true, status: 250 });
    const other = await openSink({
      host: "127.0.0.2",
      allowPrivateNetworks: false,
      allowCidrs: ["127.0.0.1/32"],
    }).deliver(completed(), live());
    expect(other).toMatchObject({ ok: false, permanent: true });
    expect(server.messages).toHaveLength(1);
  });

  it("checks the address each send connects to: a name that starts resolving to loopback is refused", async () => {
    let answer = "127.0.0.1";
    const transport = smtpTransport({
      host: "mail.example.test",
      port: server.port,
      policy: { allowCidrs: ["127.0.0.1/32"] },
      resolve: async () => [{ address: answer, family: 4 }],
      timeoutMs: 5_000,
    });
    try {
      const message = buildMessage();
      expect(await transport.send(message, live())).toMatchObject({ ok: true, status: 250 });
      answer = "10.0.0.7";
      expect(await transport.send(message, live())).toEqual({
        ok: false,
        failure: "refused",
        detail: "mail.example.test resolves to a private address",
      });
      expect(server.messages).toHaveLength(1);
    } finally {
      await transport.close();
    }
  });
});
