/**
 * Tracing end to end on Node: real gateway processes export to a real OTLP/HTTP receiver
 * (test/helpers/otlp-receiver.ts, protobuf and JSON), deliver to a real HTTP receiver and proxy
 * to the e-sign emulator. One trace runs from the upstream's `traceparent` through the durable
 * store, failed and retried attempts (also across a restart) to what the destination received.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { makeDataDir } from "../delivery/helpers/process-fixtures.ts";
import { type EsignServer, startEsignEmulator } from "../helpers/emulators.ts";
import {
  defaultTestConfig,
  type GatewayProcess,
  makeSecrets,
  startGatewayProcess,
} from "../helpers/gateway-process.ts";
import { type SinkReceiver, startSinkReceiver } from "../helpers/http-sink-receiver.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { adminKeyHash, esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { fullClient, newKey, proxyConfig, proxyEnv } from "../proxy/proxy-fixtures.ts";

const SERVER = 2;
const CLIENT = 3;
const WHSEC = `whsec_${Buffer.from("tracing-test-signing-secret-0123").toString("base64")}`;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

function otelEnv(receiver: OtlpReceiver, extra: Record<string, string> = {}): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50", ...extra };
}

function newTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

async function received(sink: SinkReceiver, path: string): Promise<Received[]> {
  return (await (await fetch(`${sink.url}/received?path=${path}`)).json()) as Received[];
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let round = 0; round < 10_000; round++) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("unreachable");
}

async function deliveryGateway(
  env: Record<string, string>,
  sink: SinkReceiver,
  retrySchedule: number[],
  reuse?: { dataDir: string; secrets: GatewayProcess["secrets"] },
): Promise<GatewayProcess> {
  const dataDir = reuse?.dataDir ?? (await makeDataDir());
  const secrets = reuse?.secrets ?? makeSecrets();
  const gateway = await startGatewayProcess({
    dataDir,
    secrets,
    env: { TEST_WHSEC: WHSEC, ...env },
    config: {
      ...defaultTestConfig(dataDir, adminKeyHash(secrets.adminKey)),
      destinations: [
        {
          id: "hooks",
          type: "http",
          url: `${sink.url}/hook`,
          secrets: ["${TEST_WHSEC}"],
          allowCidrs: ["127.0.0.1/32"],
          retry: { schedule: retrySchedule, jitter: 0 },
        },
      ],
      routes: [{ destinations: ["hooks"] }],
    },
  });
  cleanups.push(() => gateway.kill());
  return gateway;
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

describe("one trace from the upstream's call to the destination", () => {
  it("parents the server span on the incoming traceparent and carries it through a failed and a retried attempt", async () => {
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const sink = await startSinkReceiver();
    cleanups.push(() => sink.close());
    await fetch(`${sink.url}/fail`, { method: "POST", body: JSON.stringify({ count: 1, status: 503, path: "/hook" }) });
    const gateway = await deliveryGateway(otelEnv(otlp), sink, [0.05, 0.05]);
    const incoming = newTraceparent();

    const answer = await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign), {
      traceparent: incoming.traceparent,
      tracestate: "vendor=abc",
    });
    expect(answer.status).toBe(202);
    const { id } = (await answer.json()) as { id: string };

    const spans = await otlp.waitFor(
      (all) =>
        all.filter((s) => s.name === "POST" && s.attributes["gateway.delivery.outcome"] === "delivered").length === 1,
    );
    // The default protocol is http/protobuf.
    expect(otlp.contentTypes.every((type) => type === "application/x-protobuf")).toBe(true);
    const [server] = byName(spans, "POST /webhooks/{sourceId}");
    expect(server).toMatchObject({
      traceId: incoming.traceId,
      parentSpanId: incoming.spanId,
      kind: SERVER,
      attributes: {
        "http.request.method": "POST",
        "http.route": "/webhooks/{sourceId}",
        "http.response.status_code": 202,
        "gateway.event.id": id,
        "gateway.source.id": "esign",
        "cloudevents.event_type": "agreement.completed",
      },
    });
    expect(server?.resource["service.name"]).toBe("svc-gateway");
    for (const child of ["verify webhook", "record event"]) {
      expect(byName(spans, child)[0]).toMatchObject({ traceId: incoming.traceId, parentSpanId: server?.spanId });
    }
    const route = byName(spans, "route event")[0];
    expect(route).toMatchObject({ traceId: incoming.traceId, parentSpanId: server?.spanId });
    expect(route?.attributes["gateway.destination.ids"]).toEqual(["hooks"]);

    const attempts = byName(spans, "POST").sort(
      (a, b) => Number(a.attributes["gateway.delivery.attempt"]) - Number(b.attributes["gateway.delivery.attempt"]),
    );
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({
      traceId: incoming.traceId,
      parentSpanId: server?.spanId,
      kind: CLIENT,
      statusCode: 2,
      attributes: {
        "gateway.delivery.attempt": 1,
        "gateway.delivery.outcome": "failed",
        "gateway.destination.id": "hooks",
        "http.response.status_code": 503,
      },
    });
    expect(attempts[1]).toMatchObject({
      traceId: incoming.traceId,
      parentSpanId: server?.spanId,
      statusCode: 0,
      attributes: { "gateway.delivery.attempt": 2, "http.response.status_code": 200 },
    });

    // The destination got each attempt's own context, and the CloudEvent keeps the recorded one.
    const [failed] = await received(sink, "/hook-failed");
    const [delivered] = await received(sink, "/hook");
    expect(failed?.headers.traceparent).toBe(`00-${incoming.traceId}-${attempts[0]?.spanId}-01`);
    expect(delivered?.headers.traceparent).toBe(`00-${incoming.traceId}-${attempts[1]?.spanId}-01`);
    expect(delivered?.headers.tracestate).toBe("vendor=abc");
    const cloudEvent = JSON.parse(delivered?.body ?? "{}");
    expect(cloudEvent).toMatchObject({
      traceparent: `00-${incoming.traceId}-${server?.spanId}-01`,
      tracestate: "vendor=abc",
    });

    // The event log shows the same extension attributes.
    const logged = await fetch(`${gateway.url}/events/${id}`, {
      headers: { authorization: `Bearer ${gateway.secrets.adminKey}` },
    });
    expect(((await logged.json()) as { event: Record<string, string> }).event.traceparent).toBe(cloudEvent.traceparent);
  });

  it("continues the trace in a retry made by the restarted gateway (OTLP/JSON)", async () => {
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const sink = await startSinkReceiver();
    cleanups.push(() => sink.close());
    await fetch(`${sink.url}/fail`, { method: "POST", body: JSON.stringify({ count: 1, status: 500, path: "/hook" }) });
    const env = otelEnv(otlp, {
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "gateway-under-test",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,service.namespace=hooks",
    });
    // The retry is due 3 s after the failure: well after the first process is gone.
    const first = await deliveryGateway(env, sink, [3]);
    const answer = await postWebhook(first.url, "esign", await esignDelivery(first.secrets.esign));
    expect(answer.status).toBe(202);
    await otlp.waitFor((all) => all.some((s) => s.attributes["gateway.delivery.outcome"] === "failed"));
    expect(await first.kill("SIGTERM")).toBe(0);
    expect(await received(sink, "/hook")).toHaveLength(0);

    const second = await deliveryGateway(env, sink, [3], { dataDir: first.dataDir, secrets: first.secrets });
    const spans = await otlp.waitFor((all) =>
      all.some((s) => s.attributes["gateway.delivery.outcome"] === "delivered"),
    );
    expect(otlp.contentTypes.every((type) => type === "application/json")).toBe(true);
    const [server] = byName(spans, "POST /webhooks/{sourceId}");
    const retry = spans.find((s) => s.attributes["gateway.delivery.outcome"] === "delivered");
    expect(retry).toMatchObject({
      traceId: server?.traceId,
      parentSpanId: server?.spanId,
      attributes: { "gateway.delivery.attempt": 2 },
    });
    expect(server?.resource).toMatchObject({
      "service.name": "gateway-under-test",
      "deployment.environment": "test",
      "service.namespace": "hooks",
    });
    const [delivered] = await received(sink, "/hook");
    expect(delivered?.headers.traceparent).toBe(`00-${server?.traceId}-${retry?.spanId}-01`);
    await second.kill();
  });
});

describe("proxied calls", () => {
  let esign: EsignServer | undefined;
  afterEach(async () => {
    await esign?.close();
    esign = undefined;
  });

  it("traces the call to the upstream and its token fetch, and sends traceparent upstream", async () => {
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    esign = await startEsignEmulator();
    const key = newKey();
    const options = { esign, clients: [fullClient(key)] };
    const dataDir = await makeDataDir();
    const gateway = await startGatewayProcess({
      config: proxyConfig(options),
      env: { ...proxyEnv(options), ...otelEnv(otlp) },
      dataDir,
    });
    cleanups.push(() => gateway.kill());
    const incoming = newTraceparent();

    const answer = await fetch(`${gateway.url}/api/esign/agreements?limit=5`, {
      headers: { authorization: `Bearer ${key}`, traceparent: incoming.traceparent },
    });
    expect(answer.status).toBe(200);
    const spans = await otlp.waitFor((all) => all.some((s) => s.name === "GET /api/{upstreamId}/{path}"));
    const [server] = byName(spans, "GET /api/{upstreamId}/{path}");
    const [call] = byName(spans, "GET");
    const [token] = byName(spans, "fetch access token");
    expect(server).toMatchObject({
      traceId: incoming.traceId,
      parentSpanId: incoming.spanId,
      kind: SERVER,
      attributes: { "http.response.status_code": 200, "gateway.upstream.id": "esign" },
    });
    expect(call).toMatchObject({
      traceId: incoming.traceId,
      parentSpanId: server?.spanId,
      kind: CLIENT,
      attributes: { "http.response.status_code": 200, "url.full": `${esign.baseUrl}/agreements` },
    });
    expect(token).toMatchObject({ traceId: incoming.traceId, parentSpanId: call?.spanId, kind: CLIENT, statusCode: 0 });
    // No credential in any span.
    expect(JSON.stringify(spans)).not.toContain(esign.client.clientSecret);

    const upstreamCall = esign.seen.find((r) => r.path === "/agreements");
    expect(upstreamCall?.headers.traceparent).toBe(`00-${incoming.traceId}-${call?.spanId}-01`);
  });
});

describe("sampling", () => {
  it("exports nothing with OTEL_TRACES_SAMPLER=always_off, and still records a context", async () => {
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const sink = await startSinkReceiver();
    cleanups.push(() => sink.close());
    const gateway = await deliveryGateway(otelEnv(otlp, { OTEL_TRACES_SAMPLER: "always_off" }), sink, [0.05]);
    const incoming = newTraceparent();
    const answer = await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign), {
      traceparent: incoming.traceparent,
    });
    expect(answer.status).toBe(202);
    const [delivered] = await until(
      () => received(sink, "/hook"),
      (list) => list.length === 1,
    );
    // The gateway's own (unsampled) span: same trace, a new span id, the sampled flag cleared.
    expect(delivered?.headers.traceparent).toMatch(new RegExp(`^00-${incoming.traceId}-[0-9a-f]{16}-00$`));
    expect(delivered?.headers.traceparent).not.toContain(incoming.spanId);
    // A graceful stop flushes the exporter: whatever would be exported has been by now.
    expect(await gateway.kill("SIGTERM")).toBe(0);
    expect(otlp.spans).toEqual([]);
    expect(otlp.contentTypes).toEqual([]);
  });

  it("without an OTLP endpoint passes the caller's traceparent through unchanged", async () => {
    const sink = await startSinkReceiver();
    cleanups.push(() => sink.close());
    const gateway = await deliveryGateway({}, sink, [0.05]);
    const incoming = newTraceparent();
    await postWebhook(gateway.url, "esign", await esignDelivery(gateway.secrets.esign), {
      traceparent: incoming.traceparent,
    });
    const [delivered] = await until(
      () => received(sink, "/hook"),
      (list) => list.length === 1,
    );
    expect(delivered?.headers.traceparent).toBe(incoming.traceparent);
    expect(JSON.parse(delivered?.body ?? "{}").traceparent).toBe(incoming.traceparent);
  });
});
