/**
 * Operations surface: `GET /healthz` (200 with the store reachable, 503 when its ping fails) and
 * `GET /metrics` (accepted, duplicates, rejected by reason and the latency histogram, counted
 * exactly, with no secret and no body text).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { utf8 } from "../../src/crypto/crypto-port.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import {
  esignDelivery,
  postWebhook,
  type SignedDelivery,
  signEsignBytes,
  staffingDelivery,
} from "../helpers/signed-requests.ts";
import { createTestGateway, startGatewayWithTinySource } from "../ingress/gateway-fixtures.ts";

/** The value of one sample line `name{labels} value`; labels in any order. 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (
      Object.keys(found).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => found[k] === v)
    ) {
      return Number(match[3]);
    }
  }
  return 0;
}

describe("GET /healthz", () => {
  it("answers 503 while the store ping fails and 200 once it answers again (in process)", async () => {
    const gw = createTestGateway();
    gw.store.failWrites = true;
    // Details need operator credentials (docs/security-and-deployment.md#what-protects-what); in
    // process there is no address.
    const down = await gw.request("/healthz");
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ ok: false, store: { driver: "memory", reachable: false } });
    gw.store.failWrites = false;
    const up = await gw.request("/healthz");
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ ok: true, store: { reachable: true } });
  });
});

describe("a real process", () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGatewayWithTinySource();
  });
  afterAll(async () => {
    await gw.kill();
  });

  it("answers /healthz 200 with the sqlite store reachable", async () => {
    const response = await fetch(`${gw.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      ok: true,
      store: { driver: "sqlite", reachable: true },
      sources: ["esign", "staffing", "tiny"],
    });
  });

  it("counts what was sent in /metrics, without secrets or body text", async () => {
    const { esign, staffing } = gw.secrets;
    const canary = `canary-${crypto.randomUUID()}`;
    const withCanary = (body: Record<string, unknown>) => {
      body.note = canary;
    };
    const e1 = await esignDelivery(esign, "agreement.completed", { edit: withCanary });
    const e2 = await esignDelivery(esign, "agreement.completed");
    const e3 = await esignDelivery(esign, "agreement.sent");
    const e4 = await esignDelivery(esign, "agreement.teleported");
    const s1 = await staffingDelivery(staffing, "candidate.accepted", { edit: withCanary });
    const s2 = await staffingDelivery(staffing, "candidate.accepted");
    const notJson = utf8(`not json ${canary}`);
    const huge = utf8(`{"event_id":"${canary}","pad":"${"x".repeat(2048)}"}`);
    const plan: [string, SignedDelivery, number][] = [
      ["esign", e1, 202],
      ["esign", e2, 202],
      ["esign", e3, 202],
      ["esign", e4, 202],
      ["staffing", s1, 202],
      ["staffing", s2, 202],
      ["esign", e1, 200],
      ["esign", e1, 200],
      ["staffing", s1, 200],
      ["esign", await esignDelivery("whsec_wrong_secret_0123456789"), 401],
      ["esign", await esignDelivery("whsec_wrong_secret_0123456789"), 401],
      ["esign", { body: e2.body, headers: {} }, 401],
      ["staffing", await staffingDelivery(staffing, "candidate.accepted", { now: Date.now() - 3_600_000 }), 401],
      ["staffing", { body: s2.body, headers: { "x-svc-signature": "v1=nope" } }, 401],
      ["esign", { body: notJson, headers: await signEsignBytes(esign, notJson) }, 400],
      ["nope", e2, 404],
      ["nope", e3, 404],
      ["tiny", { body: huge, headers: await signEsignBytes(esign, huge) }, 413],
    ];
    for (const [source, delivery, status] of plan) {
      expect([source, (await postWebhook(gw.url, source, delivery)).status]).toEqual([source, status]);
    }

    const response = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.secrets.adminKey}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await response.text();

    const accepted = "gateway_webhooks_accepted_total";
    expect(sample(text, accepted, { source: "esign", type: "agreement.completed" })).toBe(2);
    expect(sample(text, accepted, { source: "esign", type: "agreement.sent" })).toBe(1);
    expect(sample(text, accepted, { source: "esign", type: "unknown" })).toBe(1);
    expect(sample(text, accepted, { source: "staffing", type: "candidate.accepted" })).toBe(2);
    expect(sample(text, "gateway_webhooks_duplicate_total", { source: "esign" })).toBe(2);
    expect(sample(text, "gateway_webhooks_duplicate_total", { source: "staffing" })).toBe(1);
    const rejected = (source: string, reason: string) =>
      sample(text, "gateway_webhooks_rejected_total", { source, reason });
    expect(rejected("esign", "signature_mismatch")).toBe(2);
    expect(rejected("esign", "missing_signature")).toBe(1);
    expect(rejected("staffing", "timestamp_out_of_tolerance")).toBe(1);
    expect(rejected("staffing", "malformed_signature")).toBe(1);
    expect(rejected("esign", "invalid_body")).toBe(1);
    expect(rejected("unknown", "unknown_source")).toBe(2);
    expect(rejected("tiny", "payload_too_large")).toBe(1);

    const histogram = "gateway_webhook_verify_record_seconds";
    for (const [source, count] of [
      ["esign", 4],
      ["staffing", 2],
    ] as const) {
      expect(sample(text, `${histogram}_count`, { source })).toBe(count);
      expect(sample(text, `${histogram}_bucket`, { source, le: "+Inf" })).toBe(count);
      expect(sample(text, `${histogram}_sum`, { source })).toBeGreaterThan(0);
      const buckets = text
        .split("\n")
        .filter((l) => l.startsWith(`${histogram}_bucket{source="${source}"`))
        .map((l) => Number(l.split(" ")[1]));
      expect(buckets.length).toBeGreaterThan(2);
      expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    }
    expect(text).toContain(`# TYPE ${histogram} histogram`);

    for (const secret of Object.values(gw.secrets)) expect(text).not.toContain(secret);
    for (const bodyText of [canary, "Anna Svensson", "anna.svensson@example.com", "crm-deal-4711", "evt-"]) {
      expect(text).not.toContain(bodyText);
    }
    expect(text).not.toContain(e1.headers["x-svc-signature"]!.slice(7));
  });
});
