/**
 * The sink conformance suite (test/conformance/sink-conformance.ts) inside workerd, against the
 * sinks the Workers sink registry builds (adapters/cloudflare/worker-sink-registry.ts): `http` over
 * the runtime's fetch and `http-email`, both against the loopback receiver
 * (test/helpers/http-sink-receiver.ts). The `cloudflare-queues` transport is delivered through a
 * real queue consumer, asynchronously, and is covered end to end by delivery.test.ts.
 */
import { env } from "cloudflare:workers";
import * as v from "valibot";
import { beforeAll } from "vitest";
import { workerSinkTransports } from "../../adapters/cloudflare/worker-sink-registry.ts";
import { DestinationSchema } from "../../src/config/schema.ts";
import { testSinkDriver } from "../conformance/sink-conformance.ts";
import { type Received, received } from "./gateway-client.ts";

let closedUrl = "";
beforeAll(async () => {
  const { port } = (await (await fetch(`${env.TEST_SINK_URL}/closed-port`)).json()) as { port: number };
  closedUrl = `http://127.0.0.1:${port}`;
});

function build(transport: string, config: Record<string, unknown>) {
  const factory = workerSinkTransports[transport];
  if (!factory) throw new Error(`no Workers sink ${transport}`);
  return factory(v.parse(DestinationSchema, config), {});
}

testSinkDriver(
  "http on Workers (fetch)",
  (kind) =>
    build("http", {
      id: "conformance-http",
      type: "http",
      url: `${kind === "reachable" ? env.TEST_SINK_URL : closedUrl}/conformance-http`,
      secrets: [env.WORKERD_TEST_WHSEC],
      allowPrivateNetworks: true,
    }),
  async (eventId) =>
    (await received("/conformance-http"))
      .filter((r: Received) => r.headers["webhook-id"] === eventId)
      .map((r: Received) => ({ eventId, type: (JSON.parse(r.body) as { type: string }).type })),
);

testSinkDriver(
  "email (http-email) on Workers",
  (kind) =>
    build("http-email", {
      id: "conformance-mail",
      type: "email",
      transport: "http-email",
      url: `${kind === "reachable" ? env.TEST_SINK_URL : closedUrl}/conformance-mail`,
      allowPrivateNetworks: true,
      apiKey: "mail_api_conformance_key_0123",
      from: "gateway@example.com",
      to: ["ops@example.com"],
      timeoutMs: 5_000,
    }),
  async (eventId) =>
    (await received("/conformance-mail"))
      .map((r: Received) => JSON.parse(r.body) as { headers: Record<string, string> })
      .filter((mail) => mail.headers["X-Gateway-Event-Id"] === eventId)
      .map((mail) => ({ eventId, type: String(mail.headers["X-Gateway-Event-Type"]) })),
);
