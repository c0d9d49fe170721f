/**
 * Tracing inside workerd: the Worker, its delivery object and an in-test gateway export over
 * `fetch` (flushed through `waitUntil`) to a real OTLP/HTTP receiver on loopback (protobuf,
 * decoded by test/helpers/otlp-receiver.ts). One trace runs from the upstream's `traceparent`
 * through a failed attempt, its retry (also one the alarm brings after the object was reset)
 * and the queue message, to what the destination received.
 */
import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createWorkerConfig } from "../../adapters/cloudflare/worker-config.ts";
import { createWorkerTracing } from "../../adapters/cloudflare/worker-tracing.ts";
import { inProcessHub } from "../../adapters/hub/in-process.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import { createGateway } from "../../src/create-gateway.ts";
import type { ReceivedSpan } from "../helpers/otlp-receiver.ts";
import { BASE, esignBody, failHooks, postWebhook, type Received, received, waitFor } from "./gateway-client.ts";
import { ESIGN_SECRET, esignSignature } from "./reference-signatures.ts";

const APP_KEY = "workerd_test_app_key_0123456789";

function newTraceparent() {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function spansOf(traceId: string): Promise<ReceivedSpan[]> {
  const all = (await (await fetch(`${env.OTEL_EXPORTER_OTLP_ENDPOINT}/spans`)).json()) as ReceivedSpan[];
  return all.filter((span) => span.traceId === traceId);
}

/** Waits until the trace holds spans satisfying `ok`. */
function traceUntil(traceId: string, ok: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return waitFor(async () => {
    const spans = await spansOf(traceId);
    return ok(spans) ? spans : undefined;
  });
}

async function postTraced(body: string, traceparent: string): Promise<string> {
  const response = await postWebhook("esign", body, {
    "x-svc-signature": await esignSignature(ESIGN_SECRET, body),
    traceparent,
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

const delivered = (spans: ReceivedSpan[], destination: string) =>
  spans.filter(
    (s) =>
      s.attributes["gateway.destination.id"] === destination &&
      s.attributes["gateway.delivery.outcome"] === "delivered",
  );

describe("tracing on Workers", () => {
  it("keeps one trace from the incoming traceparent through a failed and a retried attempt to the destination", async () => {
    const incoming = newTraceparent();
    const { body, eventId } = esignBody("evt-trace");
    await failHooks(eventId, 1);
    const id = await postTraced(body, incoming.traceparent);

    const spans = await traceUntil(
      incoming.traceId,
      (all) => delivered(all, "hooks").length === 1 && delivered(all, "events-queue").length === 1,
    );
    const server = spans.find((s) => s.name === "POST /webhooks/{sourceId}");
    expect(server).toMatchObject({
      parentSpanId: incoming.spanId,
      kind: 2,
      attributes: { "http.response.status_code": 202, "gateway.event.id": id },
    });
    expect(spans.find((s) => s.name === "record event")?.parentSpanId).toBe(server?.spanId);
    const attempts = spans
      .filter((s) => s.attributes["gateway.destination.id"] === "hooks")
      .sort(
        (a, b) => Number(a.attributes["gateway.delivery.attempt"]) - Number(b.attributes["gateway.delivery.attempt"]),
      );
    expect(
      attempts.map((s) => [s.name, s.parentSpanId, s.attributes["gateway.delivery.outcome"], s.statusCode]),
    ).toEqual([
      ["POST", server?.spanId, "failed", 2],
      ["POST", server?.spanId, "delivered", 0],
    ]);
    const [hook] = (await received("/hook")).filter((r: Received) => r.body.includes(eventId));
    expect(hook?.headers.traceparent).toBe(`00-${incoming.traceId}-${attempts[1]?.spanId}-01`);
    expect(JSON.parse(hook?.body ?? "{}").traceparent).toBe(`00-${incoming.traceId}-${server?.spanId}-01`);

    // The queue message carries the context of its own (producer) span.
    const [queued] = delivered(spans, "events-queue");
    expect(queued).toMatchObject({ name: "send TEST_EVENTS_QUEUE", kind: 4 });
    const message = await waitFor(async () => {
      const got = (await received("/queue")).filter((r: Received) => r.body.includes(eventId));
      return got.length > 0 ? (JSON.parse((got[0] as Received).body) as Record<string, string>) : undefined;
    });
    expect(message.traceparent).toBe(`00-${incoming.traceId}-${queued?.spanId}-01`);
  });

  it("continues the trace in the retry the alarm brings after the delivery object was reset", async () => {
    const incoming = newTraceparent();
    const { body, eventId } = esignBody("evt-trace-alarm", "agreement.expired");
    await failHooks(eventId, 1, 503, "/slow");
    await postTraced(body, incoming.traceparent);
    await traceUntil(incoming.traceId, (all) =>
      all.some((s) => s.attributes["gateway.destination.id"] === "slow-hooks"),
    );
    await abortAllDurableObjects();
    const spans = await traceUntil(incoming.traceId, (all) => delivered(all, "slow-hooks").length === 1);
    const server = spans.find((s) => s.name === "POST /webhooks/{sourceId}");
    const [retry] = delivered(spans, "slow-hooks");
    expect(retry).toMatchObject({ parentSpanId: server?.spanId, attributes: { "gateway.delivery.attempt": 2 } });
    const [slow] = (await received("/slow")).filter((r: Received) => r.body.includes(eventId));
    expect(slow?.headers.traceparent).toBe(`00-${incoming.traceId}-${retry?.spanId}-01`);
  });

  it("traces a proxied call and its token fetch", async () => {
    // A gateway on the Worker's bindings with a store of its own, so its first call needs a token.
    const gateway = createGateway({
      config: createWorkerConfig(env),
      store: memoryStore(),
      hub: inProcessHub(undefined),
      tracing: createWorkerTracing(env),
    });
    const incoming = newTraceparent();
    const response = await gateway.fetch(
      new Request(`${BASE}/api/esign/agreements`, {
        headers: { authorization: `Bearer ${APP_KEY}`, traceparent: incoming.traceparent },
      }),
    );
    expect(response.status).toBe(200);
    await gateway.ctx.tracing?.flush();
    const spans = await traceUntil(incoming.traceId, (all) => all.length >= 3);
    const server = spans.find((s) => s.name === "GET /api/{upstreamId}/{path}");
    const call = spans.find((s) => s.name === "GET");
    const token = spans.find((s) => s.name === "fetch access token");
    expect(server?.parentSpanId).toBe(incoming.spanId);
    expect(call).toMatchObject({
      parentSpanId: server?.spanId,
      kind: 3,
      attributes: { "http.response.status_code": 200 },
    });
    expect(token).toMatchObject({ parentSpanId: call?.spanId, kind: 3, statusCode: 0 });
    await gateway.close();
  });

  it("exports nothing when the sampler is always_off", async () => {
    const off = createWorkerTracing({ ...env, OTEL_TRACES_SAMPLER: "always_off" });
    const on = createWorkerTracing(env);
    const gateways = [off, on].map((tracing) =>
      createGateway({ config: createWorkerConfig(env), store: memoryStore(), hub: inProcessHub(undefined), tracing }),
    );
    const traces = [newTraceparent(), newTraceparent()];
    for (const [i, gateway] of gateways.entries()) {
      const { body } = esignBody(`evt-sampled-${i}`);
      const response = await gateway.fetch(
        new Request(`${BASE}/webhooks/esign`, {
          method: "POST",
          headers: {
            "x-svc-signature": await esignSignature(ESIGN_SECRET, body),
            traceparent: traces[i]?.traceparent ?? "",
          },
          body,
        }),
      );
      expect(response.status).toBe(202);
      await gateway.ctx.tracing?.flush();
    }
    // The sampled gateway's spans arrived, so the unsampled one's would have by now too.
    await traceUntil(traces[1]?.traceId ?? "", (all) => all.some((s) => s.name === "POST /webhooks/{sourceId}"));
    expect(await spansOf(traces[0]?.traceId ?? "")).toEqual([]);
    for (const gateway of gateways) await gateway.close();
  });
});
