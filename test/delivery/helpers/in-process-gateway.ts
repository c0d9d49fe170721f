/**
 * An in-process gateway for delivery tests driven by manual time: the real app (ingress, routes,
 * admin API), the memory store and outbox, real HTTP sinks through the SSRF-guarded transport to
 * real receivers on loopback, and a manual clock/scheduler so retries of hours take no time.
 * Signatures use the real clock (the manual one starts at "now"), so receivers verify them.
 */

import { randomBytes } from "node:crypto";
import { memoryOutbox } from "../../../adapters/outbox/memory.ts";
import { httpWebhookSink } from "../../../adapters/sink/http.ts";
import { resolveConfig } from "../../../src/config/resolve-config.ts";
import type { GatewayConfigInput } from "../../../src/config/schema.ts";
import type { Gateway } from "../../../src/create-gateway.ts";
import type { DeliveryEngine } from "../../../src/delivery/delivery-engine.ts";
import type { HttpDestination } from "../../../src/delivery/http/http-destination-schema.ts";
import type { OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { createLogger } from "../../../src/ops/logger.ts";
import { buildInProcessGateway } from "../../helpers/in-process-gateway.ts";
import { adminKeyHash, esignDelivery, type JsonAnswer, webhookRequest } from "../../helpers/signed-requests.ts";
import { createManualTime, type ManualTime } from "./manual-time.ts";

/** A fresh Standard Webhooks secret: whsec_ + base64 of 32 random bytes. */
export function makeWhsecSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * The resolved config of a gateway on the memory store with one e-sign source (`esignSecret`) and
 * one `http` destination, "plain", that every event is routed to (its URL answers nothing: the
 * tests that use it put their own sink in its place).
 */
export function onePlainDestinationConfig(esignSecret: string) {
  return resolveConfig(
    {
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "esign", secrets: [esignSecret] }],
      destinations: [
        {
          id: "plain",
          type: "http",
          url: "http://127.0.0.1:9/plain",
          secrets: [makeWhsecSecret()],
          allowCidrs: ["127.0.0.1/32"],
        },
      ],
      routes: [{ destinations: ["plain"] }],
      log: { level: "silent" },
    },
    {},
  );
}

type DestinationInput = Partial<Omit<HttpDestination, "id" | "url">> & { id: string; url: string };

export interface InProcessOptions {
  destinations: DestinationInput[];
  /** Default: one route sending every event to every destination. */
  routes?: GatewayConfigInput["routes"];
  outbox?: OutboxStore;
}

export interface InProcessGateway {
  gateway: Gateway;
  engine: DeliveryEngine;
  time: ManualTime;
  outbox: OutboxStore;
  whsec: string;
  adminKey: string;
  /** Posts a signed e-sign webhook; resolves with the gateway event id (after the engine settled,
   * unless `settle` is false). */
  post(type?: string, options?: { subjectId?: string; settle?: boolean }): Promise<string>;
  /** Calls the admin API; JSON body in and out. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: JsonAnswer }>;
  close(): Promise<void>;
}

/** Builds and starts the gateway; loopback is allowed explicitly on every destination. */
export async function startInProcessGateway(options: InProcessOptions): Promise<InProcessGateway> {
  const esignSecret = `esign_${randomBytes(16).toString("hex")}`;
  const adminKey = `admin_${randomBytes(16).toString("hex")}`;
  const whsec = makeWhsecSecret();
  const config = resolveConfig(
    {
      store: { driver: "memory" },
      sources: [{ id: "esign", service: "esign", secrets: [esignSecret] }],
      admin: { apiKeyHashes: [adminKeyHash(adminKey)] },
      destinations: options.destinations.map((d) => ({
        type: "http",
        secrets: [whsec],
        allowCidrs: ["127.0.0.1/32"],
        ...d,
      })),
      routes: options.routes ?? [{ destinations: options.destinations.map((d) => d.id) }],
      log: { level: "silent" },
    },
    {},
  );
  const outbox = options.outbox ?? memoryOutbox();
  let gateway: Gateway | undefined;
  const time = createManualTime(async () => {
    await gateway?.ctx.delivery?.settled();
  });
  const sinks = config.destinations.flatMap((d) => (d.type === "http" ? [httpWebhookSink(d, undefined)] : []));
  gateway = buildInProcessGateway({
    config,
    resolved: true,
    clock: time.clock,
    logger: createLogger("silent"),
    delivery: { outbox, sinks, scheduler: time.scheduler, random: () => 0.5, pollIntervalMs: 24 * 3600 * 1000 },
  });
  await gateway.start();
  const running = gateway;
  const engine = running.ctx.delivery as DeliveryEngine;
  return {
    gateway: running,
    engine,
    time,
    outbox,
    whsec,
    adminKey,
    async post(type = "agreement.completed", postOptions = {}) {
      const delivery = await esignDelivery(esignSecret, type, { subjectId: postOptions.subjectId });
      const response = await running.fetch(webhookRequest("http://gateway.test", "esign", delivery));
      if (response.status !== 202) throw new Error(`webhook answered ${response.status}: ${await response.text()}`);
      const { id } = (await response.json()) as { id: string };
      if (postOptions.settle !== false) await engine.settled();
      return id;
    },
    async admin(method, path, body) {
      const response = await running.fetch(
        new Request(`http://gateway.test${path}`, {
          method,
          headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    close: () => running.close(),
  };
}
