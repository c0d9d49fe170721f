/**
 * `gateway listen` in the event's trace: a real gateway and a real listener, both exporting to
 * a real OTLP/HTTP receiver. The forward is a client span under the context recorded on the
 * event, and the local app receives that span's `traceparent`.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startWebhookReceiver, waitFor } from "../delivery/helpers/webhook-receiver.ts";
import { makeSecrets, startGatewayProcess } from "../helpers/gateway-process.ts";
import { startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { esignDelivery, postWebhook } from "../helpers/signed-requests.ts";
import { liveConfig, startListener, tempDir } from "../listen/listen-fixtures.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it("forwards each event in a span of the event's trace and sends its traceparent to the local app", async () => {
  const otlp = await startOtlpReceiver();
  cleanups.push(() => otlp.close());
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "50" };
  const secrets = makeSecrets();
  const dataDir = await tempDir("gw-trace-listen-");
  const gateway = await startGatewayProcess({
    secrets,
    dataDir,
    config: liveConfig(dataDir, secrets.adminKey),
    env: otel,
  });
  cleanups.push(() => gateway.kill());
  const app = await startWebhookReceiver();
  cleanups.push(() => app.close());
  const listener = await startListener(
    [
      gateway.url,
      "--forward-to",
      `${app.url}/hook`,
      "--key",
      secrets.adminKey,
      "--state",
      join(dataDir, "listen.json"),
    ],
    { env: { ...process.env, ...otel, OTEL_SERVICE_NAME: "local-listener" } },
  );
  cleanups.push(() => listener.kill());

  const traceId = randomBytes(16).toString("hex");
  const answer = await postWebhook(gateway.url, "esign", await esignDelivery(secrets.esign), {
    traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`,
  });
  expect(answer.status).toBe(202);
  const { id } = (await answer.json()) as { id: string };
  await waitFor("the forward", () => app.requests.length === 1);

  const spans = await otlp.waitFor((all) => all.some((s) => s.resource["service.name"] === "local-listener"));
  const server = spans.find((s) => s.name === "POST /webhooks/{sourceId}");
  const forward = spans.find((s) => s.resource["service.name"] === "local-listener");
  expect(forward).toMatchObject({
    name: "POST",
    kind: 3,
    traceId,
    parentSpanId: server?.spanId,
    attributes: { "gateway.event.id": id, "http.response.status_code": 200, "gateway.listen.attempts": 1 },
  });
  expect(app.requests[0]?.headers.traceparent).toBe(`00-${traceId}-${forward?.spanId}-01`);
});
