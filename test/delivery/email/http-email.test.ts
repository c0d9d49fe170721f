/**
 * The `http-email` transport on Node against a real HTTP server on loopback standing in for a
 * transactional mail API: the JSON it receives (same templates, recipients and Message-ID as
 * SMTP), the bearer key, the idempotency key, and how answers map to delivered, retried or dead.
 * The same transport runs on Workers (adapters/cloudflare/create-worker-sinks.ts).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as v from "valibot";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { httpEmailSink } from "../../../adapters/sink/http-email.ts";
import { createConfiguredSinks } from "../../../adapters/sink/registry.ts";
import { resolveConfig } from "../../../src/config/resolve-config.ts";
import { HttpEmailDestinationSchema } from "../../../src/delivery/email/http-email-destination-schema.ts";
import { createLogger } from "../../../src/ops/logger.ts";
import { buildEsignBody } from "../../../src/services/esign/esign-samples.ts";
import { makeTestRecord } from "../../conformance/sink-conformance.ts";

const API_KEY = "mail_api_test_key_0123456789";
let server: Server;
let url: string;
let answer = { status: 202 };
const received: { headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end('{"id":"provider-message-1"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/send`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  received.length = 0;
  answer = { status: 202 };
});

const destination = () =>
  v.parse(HttpEmailDestinationSchema, {
    id: "ops-mail",
    type: "email",
    transport: "http-email",
    url,
    allowPrivateNetworks: true,
    apiKey: API_KEY,
    from: "Gateway <gateway@example.com>",
    to: ["ops@example.com"],
    cc: ["audit@example.com"],
    templates: { "agreement.*": { subject: "Agreement {{data.agreement_id}}", text: "Status: {{type}}" } },
  });

const record = () =>
  makeTestRecord({
    type: "agreement.completed",
    subject: "agreements/8d5f",
    data: buildEsignBody("agreement.completed"),
  });

describe("http-email transport", () => {
  it("POSTs the rendered mail as JSON with the bearer key and the Message-ID as idempotency key", async () => {
    const sink = httpEmailSink(destination(), undefined);
    const event = record();
    expect(await sink.deliver(event, new AbortController().signal)).toEqual({ ok: true });
    expect(received).toHaveLength(1);
    const [mail] = received;
    expect(mail?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(mail?.headers["content-type"]).toBe("application/json");
    const messageId = `<${event.id}.ops-mail@gateway>`;
    expect(mail?.headers["idempotency-key"]).toBe(messageId);
    expect(mail?.body).toMatchObject({
      from: "Gateway <gateway@example.com>",
      to: ["ops@example.com"],
      cc: ["audit@example.com"],
      bcc: [],
      subject: `Agreement ${(event.event.data as { agreement_id: string }).agreement_id}`,
      text: "Status: agreement.completed",
      headers: { "Message-ID": messageId },
    });
  });

  it("retries on 429 and 5xx, retries refused credentials, dead-letters a refused message", async () => {
    const sink = httpEmailSink(destination(), undefined);
    const signal = new AbortController().signal;
    for (const status of [429, 500, 503]) {
      answer = { status };
      const result = await sink.deliver(record(), signal);
      expect(result.ok).toBe(false);
      expect(result.permanent).toBeUndefined();
    }
    answer = { status: 401 };
    expect(await sink.deliver(record(), signal)).toMatchObject({ ok: false });
    expect((await sink.deliver(record(), signal)).permanent).toBeUndefined();
    answer = { status: 422 };
    expect(await sink.deliver(record(), signal)).toMatchObject({ ok: false, permanent: true });
  });

  it("reports an unreachable API as a retryable failure", async () => {
    const sink = httpEmailSink({ ...destination(), url: "http://127.0.0.1:9/v1/send" }, undefined);
    const result = await sink.deliver(record(), new AbortController().signal);
    expect(result).toMatchObject({ ok: false });
    expect(result.permanent).toBeUndefined();
  });

  it("refuses a loopback IP in the URL without allowPrivateNetworks: permanent, no request sent", async () => {
    const sink = httpEmailSink({ ...destination(), allowPrivateNetworks: false }, undefined);
    expect(await sink.deliver(record(), new AbortController().signal)).toEqual({
      ok: false,
      permanent: true,
      error: "refused by the SSRF guard (loopback address)",
    });
    expect(received).toHaveLength(0);
    const ranged = httpEmailSink(
      { ...destination(), allowPrivateNetworks: false, allowCidrs: ["127.0.0.1/32"] },
      undefined,
    );
    expect(await ranged.deliver(record(), new AbortController().signal)).toMatchObject({ ok: true });
    expect(received).toHaveLength(1);
  });

  it("refuses a send URL that is not http(s) or carries credentials (the key belongs in apiKey)", () => {
    const base = {
      id: "m",
      type: "email",
      transport: "http-email",
      apiKey: API_KEY,
      from: "a@example.com",
      to: ["b@example.com"],
    };
    for (const bad of [
      "ftp://api.example.com/send",
      "https://user:key@api.example.com/send",
      "not a url",
      "https://",
    ]) {
      const result = v.safeParse(HttpEmailDestinationSchema, { ...base, url: bad });
      expect(result.success, bad).toBe(false);
      expect(JSON.stringify(result.issues), bad).toContain("credentials in apiKey");
    }
    expect(v.safeParse(HttpEmailDestinationSchema, { ...base, url: "https://api.example.com/send" }).success).toBe(
      true,
    );
  });

  it("is chosen by `transport: http-email` in the config on Node", async () => {
    const config = resolveConfig(
      {
        store: { driver: "memory" },
        sources: [{ id: "esign", service: "esign", secrets: ["esign_secret_0123456789abcdef"] }],
        destinations: [{ ...destination(), apiKey: "${MAIL_API_KEY}" }],
        routes: [{ destinations: ["ops-mail"] }],
      },
      { MAIL_API_KEY: API_KEY },
    );
    const [sink] = await createConfiguredSinks(config.destinations, { logger: createLogger("silent") });
    expect(await sink?.deliver(record(), new AbortController().signal)).toEqual({ ok: true });
    expect(received[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    await sink?.close();
  });
});
