/** The sink conformance suite for the email sink over an HTTP mail API (a real loopback server). */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as v from "valibot";
import { afterAll, beforeAll } from "vitest";
import { httpEmailSink } from "../../../adapters/sink/http-email.ts";
import { HttpEmailDestinationSchema } from "../../../src/delivery/email/http-email-destination-schema.ts";
import { testSinkDriver } from "../../conformance/sink-conformance.ts";
import { findFreePort } from "../../helpers/redis-server.ts";

let server: Server;
let url: string;
let deadPort: number;
const mails: { headers: Record<string, string> }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      mails.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as { headers: Record<string, string> });
      response.writeHead(202, { "content-type": "application/json" });
      response.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/send`;
  deadPort = await findFreePort();
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

testSinkDriver(
  "email (http-email)",
  (kind) =>
    httpEmailSink(
      v.parse(HttpEmailDestinationSchema, {
        id: "ops-mail",
        type: "email",
        transport: "http-email",
        url: kind === "reachable" ? url : `http://127.0.0.1:${deadPort}/v1/send`,
        allowPrivateNetworks: true,
        apiKey: "mail_api_conformance_key_0123",
        from: "gateway@example.com",
        to: ["ops@example.com"],
        timeoutMs: 5_000,
      }),
      undefined,
    ),
  async (eventId) =>
    mails
      .filter((mail) => mail.headers["X-Gateway-Event-Id"] === eventId)
      .map((mail) => ({ eventId, type: String(mail.headers["X-Gateway-Event-Type"]) })),
);
