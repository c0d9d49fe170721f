/**
 * The per-stage delivery timings (src/delivery/stage-trace.ts, `GATEWAY_DELIVERY_TRACE=<file>`
 * on Node): off, nothing is kept; on, every stage an event passed is counted, in order of the
 * chain. On a shared outbox (the memory driver marked shared, in this process) an event passes
 * all five stages; a real gateway process with the variable set writes the windows to the file
 * (the last one at stop), with no event data in it.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryOutbox } from "../../adapters/outbox/memory.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import type { Gateway } from "../../src/create-gateway.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import type { DeliverableRecord, Sink } from "../../src/delivery/sink-contract.ts";
import {
  DELIVERY_STAGES,
  enableStageTrace,
  markStage,
  type StageWindow,
  takeStageWindow,
} from "../../src/delivery/stage-trace.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { defaultTestConfig, startGatewayProcess } from "../helpers/gateway-process.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { adminKeyHash, esignDelivery, postWebhook, webhookRequest } from "../helpers/signed-requests.ts";
import { makeWhsecSecret, onePlainDestinationConfig } from "./helpers/in-process-gateway.ts";
import { makeDataDir } from "./helpers/process-fixtures.ts";
import { startWebhookReceiver, waitFor } from "./helpers/webhook-receiver.ts";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {});
});

describe("per-stage delivery timings", () => {
  it("keep nothing while off, and percentiles per stage for the window while on", () => {
    markStage("offered", 0);
    expect(takeStageWindow()).toEqual({});
    let now = 1_000;
    const off = enableStageTrace(() => now);
    cleanup.push(async () => off());
    for (let i = 1; i <= 100; i++) markStage("offered", now - i);
    now += 50;
    markStage("attempt", 1_000);
    const window = takeStageWindow();
    expect(window.offered).toEqual({ n: 100, p50: 50, p95: 95, p99: 99, max: 100 });
    expect(window.attempt).toEqual({ n: 1, p50: 50, p95: 50, p99: 50, max: 50 });
    expect(Object.keys(window).sort()).toEqual(["attempt", "offered"]);
    // The window starts over.
    expect(takeStageWindow()).toEqual({});
    off();
    markStage("offered", 0);
    expect(takeStageWindow()).toEqual({});
  });

  it("count an event at every stage of a shared outbox's chain, in order", async () => {
    const esignSecret = "esign_stage_trace_secret_0123456789";
    const config = onePlainDestinationConfig(esignSecret);
    const seen: string[] = [];
    const sink: Sink = {
      destinationId: "plain",
      async deliver(record: DeliverableRecord) {
        seen.push(record.id);
        return { ok: true, status: 204 };
      },
      close: async () => {},
    };
    const outbox: OutboxStore = { ...memoryOutbox(), shared: true };
    const gateway: Gateway = buildInProcessGateway({
      config,
      resolved: true,
      store: memoryStore({ services: builtinServices }),
      logger: createLogger("silent"),
      delivery: { outbox, sinks: [sink], pollIntervalMs: 3_600_000, stopGraceMs: 0 },
    });
    cleanup.push(() => gateway.close());
    await gateway.start();
    const off = enableStageTrace(() => Date.now());
    cleanup.push(async () => off());
    const delivery = await esignDelivery(esignSecret, "agreement.completed");
    const response = await gateway.fetch(webhookRequest("http://gateway.test", "esign", delivery));
    expect(response.status).toBe(202);
    await expect.poll(() => seen.length, { timeout: 30_000 }).toBe(1);
    const window = takeStageWindow();
    expect(Object.keys(window).sort()).toEqual([...DELIVERY_STAGES].sort());
    for (const stage of DELIVERY_STAGES) expect(window[stage]?.n).toBe(1);
    const at = DELIVERY_STAGES.map((stage) => window[stage]?.max as number);
    expect(at).toEqual([...at].sort((a, b) => a - b));
  }, 60_000);

  it("are written to the file GATEWAY_DELIVERY_TRACE names by a gateway process", async () => {
    const whsec = makeWhsecSecret();
    const receiver = await startWebhookReceiver(() => ({ status: 204 }));
    cleanup.push(() => receiver.close());
    const dataDir = await makeDataDir();
    const file = join(dataDir, "delivery-trace.jsonl");
    const gw = await startGatewayProcess({
      config: {
        ...defaultTestConfig(dataDir, adminKeyHash("unused-admin-key")),
        destinations: [
          {
            id: "hook",
            type: "http",
            url: receiver.url,
            secrets: ["${TEST_WHSEC}"],
            allowCidrs: ["127.0.0.1/32"],
          },
        ],
        routes: [{ sources: ["esign"], destinations: ["hook"] }],
      },
      dataDir,
      env: { TEST_WHSEC: whsec, GATEWAY_DELIVERY_TRACE: file },
    });
    cleanup.push(() => gw.kill());
    const delivery = await esignDelivery(gw.secrets.esign, "agreement.completed");
    expect((await postWebhook(gw.url, "esign", delivery)).status).toBe(202);
    await waitFor("the delivery", () => receiver.requests.length === 1, 90_000);
    expect(await gw.kill("SIGTERM")).toBe(0);
    const text = await readFile(file, "utf8");
    const windows = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as StageWindow & { at: string });
    const counted = (stage: string) => windows.reduce((sum, w) => sum + (w[stage]?.n ?? 0), 0);
    // The embedded store hands records to the lanes itself: offered and attempted.
    expect(counted("offered")).toBe(1);
    expect(counted("attempt")).toBe(1);
    // Timings only: not the event's id or content.
    const { id } = JSON.parse(Buffer.from(delivery.body).toString("utf8")) as { id: string };
    expect(text).not.toContain(id);
  }, 120_000);
});
