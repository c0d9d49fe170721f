/**
 * Propagation to every kind of destination, end to end through a real gateway process with
 * tracing on: the Redis Streams entry (real redis-server) carries `traceparent` and the mail
 * (real SMTP server) a `traceparent` header, each the context of its own attempt span in the
 * webhook's trace; a replay is a span of its own, linked to that trace, whose attempt joins it.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readStreamFields } from "../../src/delivery/queue/build-stream-entry.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { type RedisServer, startRedisServer } from "../helpers/redis-server.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { type SmtpTestServer, startSmtpServer } from "../helpers/smtp-server.ts";

const STREAM = "gateway:traced";
let redis: RedisServer;
let smtp: SmtpTestServer;
let otlp: OtlpReceiver;
let gateway: GatewayProcess;

beforeAll(async () => {
  [redis, smtp, otlp] = await Promise.all([startRedisServer(), startSmtpServer(), startOtlpReceiver()]);
  const secrets = makeSecrets();
  const config = defaultTestConfig("", adminKeyHash(secrets.adminKey)) as Record<string, unknown>;
  config.store = { driver: "memory" };
  config.destinations = [
    { id: "jobs", type: "queue", url: "${TEST_REDIS_URL}", stream: STREAM, maxLen: 1_000 },
    {
      id: "ops-mail",
      type: "email",
      host: "127.0.0.1",
      allowPrivateNetworks: true,
      port: smtp.port,
      from: "gw@example.com",
      to: ["ops@example.com"],
    },
  ];
  config.routes = [{ destinations: ["jobs", "ops-mail"] }];
  gateway = await startGatewayProcess({
    config,
    secrets,
    env: { TEST_REDIS_URL: redis.url, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "50" },
  });
});

afterAll(async () => {
  await gateway?.kill();
  await Promise.all([redis?.stop(), smtp?.close(), otlp?.close()]);
});

it("puts each attempt's context in the stream entry and the mail, and links a replay to the trace", async () => {
  const answer = await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign));
  expect(answer.status).toBe(202);
  const { id } = (await answer.json()) as { id: string };
  const delivered = (destination: string) => (s: (typeof otlp.spans)[number]) =>
    s.attributes["gateway.destination.id"] === destination && s.attributes["gateway.delivery.outcome"] === "delivered";
  const spans = await otlp.waitFor((all) => all.some(delivered("jobs")) && all.some(delivered("ops-mail")));
  const server = spans.find((s) => s.name === "POST /webhooks/{sourceId}");
  const queued = spans.find(delivered("jobs"));
  const mailed = spans.find(delivered("ops-mail"));
  expect(queued).toMatchObject({
    name: `send ${STREAM}`,
    kind: 4,
    traceId: server?.traceId,
    parentSpanId: server?.spanId,
    attributes: {
      "messaging.system": "redis_streams",
      "messaging.destination.name": STREAM,
      "messaging.message.id": id,
    },
  });
  expect(mailed).toMatchObject({
    name: "send email",
    kind: 3,
    traceId: server?.traceId,
    parentSpanId: server?.spanId,
    attributes: { "gateway.delivery.status": 250 },
  });

  const reader = new Redis(redis.url);
  const raw = (await reader.xrange(STREAM, "-", "+")) as [string, string[]][];
  reader.disconnect();
  const entry = raw.map(([, flat]) => readStreamFields(flat)).find((e) => e.id === id);
  expect(entry?.traceparent).toBe(`00-${server?.traceId}-${queued?.spanId}-01`);
  expect(JSON.parse(entry?.payload ?? "{}").traceparent).toBe(`00-${server?.traceId}-${server?.spanId}-01`);

  const [mail] = await smtp.waitForMessages(1);
  expect(mail?.parsed.headers.get("traceparent")).toBe(`00-${server?.traceId}-${mailed?.spanId}-01`);

  // A replay: its own span in a new trace, linked to the event's; the attempt stays in the event's trace.
  const replayed = await fetch(`${gateway.url}/events/${id}/replay`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.secrets.adminKey}`, "content-type": "application/json" },
    body: JSON.stringify({ destination: "jobs" }),
  });
  expect(replayed.status).toBeLessThan(300);
  const after = await otlp.waitFor((all) => all.filter(delivered("jobs")).length === 2);
  const replay = after.find((s) => s.name === "replay event");
  expect(replay?.traceId).not.toBe(server?.traceId);
  expect(replay?.links).toEqual([{ traceId: server?.traceId, spanId: server?.spanId }]);
  const again = after.filter(delivered("jobs")).find((s) => s.spanId !== queued?.spanId);
  expect(again).toMatchObject({ traceId: server?.traceId, attributes: { "gateway.delivery.attempt": 1 } });
});
