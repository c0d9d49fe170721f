/**
 * A service defined only in the test tree (toy-service.ts) runs the service conformance suite
 * and goes through the gateway: its config validates, its samples (what `gateway trigger`
 * sends) pass ingress and normalize, forgeries are refused, and dedupe uses its identity.
 */
import { describe, expect, it } from "vitest";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { normalizeEvent } from "../../src/events/normalize-event.ts";
import { buildSampleDelivery } from "../../src/samples/sample-webhooks.ts";
import { esignService } from "../../src/services/esign/esign-service.ts";
import { createServiceRegistry } from "../../src/services/registry.ts";
import { staffingService } from "../../src/services/staffing/staffing-service.ts";
import { testUpstreamService } from "../conformance/service-conformance.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { toyService } from "./toy-service.ts";

testUpstreamService(toyService);

const SECRET = "toy-secret-0123456789abcdef";
const services = [esignService, staffingService, toyService];
const config = {
  store: { driver: "memory" },
  sources: [{ id: "widgets", service: "toy", secrets: [SECRET] }],
  log: { level: "silent" },
};

const post = (
  gateway: ReturnType<typeof buildInProcessGateway>,
  delivery: { body: string; headers: Record<string, string> },
) =>
  gateway.fetch(
    new Request("http://gateway.test/webhooks/widgets", {
      method: "POST",
      headers: delivery.headers,
      body: delivery.body,
    }),
  );

describe("a third service without editing src/", () => {
  it("is refused by the built-in registry and accepted with it registered", () => {
    expect(() => buildInProcessGateway({ config })).toThrow(/sources\.0\.service: expected `esign` or `staffing`/);
    expect(buildInProcessGateway({ config, services }).ctx.services.get("toy")).toBe(toyService);
  });

  it("takes a triggered sample through ingress, normalize and dedupe", async () => {
    const gateway = buildInProcessGateway({ config, services });
    const crypto = createWebCrypto();
    const delivery = await buildSampleDelivery(crypto, toyService, "widget.created", SECRET, { uniqueId: "42" });
    const first = await post(gateway, delivery);
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    const again = await post(gateway, delivery);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id, duplicate: true });
    const record = await gateway.ctx.store.get(id);
    expect(record?.event).toMatchObject({
      type: "widget.created",
      service: "toy",
      subject: "widgets/w-1",
      upstreamid: "toy-42",
      upstreamidkind: "toy_id",
      source: "/webhooks/widgets",
    });
    await gateway.close();
  });

  it("refuses a forged delivery with the service's own scheme", async () => {
    const gateway = buildInProcessGateway({ config, services });
    const delivery = await buildSampleDelivery(
      createWebCrypto(),
      toyService,
      "widget.deleted",
      "another-secret-0123456789",
    );
    const response = await post(gateway, delivery);
    expect(response.status).toBe(401);
    await gateway.close();
  });

  it("normalizes through the registry it is given", async () => {
    const crypto = createWebCrypto();
    const delivery = await buildSampleDelivery(crypto, toyService, "widget.deleted", SECRET, { uniqueId: "7" });
    const source = buildInProcessGateway({ config, services }).ctx.sources.get("widgets");
    if (!source) throw new Error("no source");
    const result = await normalizeEvent(
      {
        source,
        rawBody: new TextEncoder().encode(delivery.body),
        headers: new Headers(delivery.headers),
        receivedAt: Date.UTC(2026, 0, 1),
        services: createServiceRegistry(services),
      },
      crypto,
    );
    expect(result).toMatchObject({ ok: true, identity: "toy-7", marks: [], event: { type: "widget.deleted" } });
  });
});
