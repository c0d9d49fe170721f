/**
 * normalizeEvent: every documented event type of both services becomes a CloudEvents 1.0
 * envelope with no marks; identity rules; marks for unknown types, extra fields and wrong field
 * types (never a rejection); rejection of bodies that cannot be events.
 */
import { createHash } from "node:crypto";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { createNodeCrypto } from "../../adapters/node/node-crypto.ts";
import { type SourceConfig, SourceSchema } from "../../src/config/schema.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { type NormalizeInput, normalizeEvent } from "../../src/events/normalize-event.ts";
import { buildSampleDelivery, sampleEventTypes } from "../../src/samples/sample-webhooks.ts";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";

const crypto = createWebCrypto();
const SECRET = "whsec_normalize_test_0123456789";
const NOW = Date.parse("2026-03-14T09:26:53.589Z");
const RECEIVED = NOW + 1500;
const RECEIVED_ISO = new Date(RECEIVED).toISOString();

const source = (input: Record<string, unknown>): SourceConfig => v.parse(SourceSchema, { secrets: [SECRET], ...input });
const ESIGN = source({ id: "esign", service: "esign" });
const STAFFING = source({ id: "staffing", service: "staffing" });
const STAFFING_BY_BODY = source({ id: "staffing-hash", service: "staffing", identity: "body-sha256" });

const encode = (value: unknown) => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));

function normalize(src: SourceConfig, body: unknown, headers: Record<string, string> = {}) {
  const input: NormalizeInput = {
    source: src,
    rawBody: encode(body),
    headers: new Headers(headers),
    receivedAt: RECEIVED,
  };
  return normalizeEvent(input, crypto);
}

/** The gateway id computed independently: `evt_` + first 16 bytes of SHA-256(source NUL identity). */
const expectedId = (sourceId: string, identity: string) =>
  `evt_${createHash("sha256").update(`${sourceId}\u0000${identity}`).digest("hex").slice(0, 32)}`;
const sha256Hex = (body: string) => createHash("sha256").update(body).digest("hex");

async function accepted(result: ReturnType<typeof normalize>) {
  const settled = await result;
  if (!settled.ok) throw new Error(`expected a normalized event, got: ${settled.message}`);
  return settled;
}

describe("documented event types", () => {
  it.each(sampleEventTypes("esign"))("e-sign %s normalizes with no marks", async (type) => {
    const delivery = await buildSampleDelivery(crypto, "esign", type, SECRET, { uniqueId: "u1", now: NOW });
    const { event, identity, marks } = await accepted(normalize(ESIGN, delivery.body, delivery.headers));
    expect(marks).toEqual([]);
    expect(identity).toBe("evt-u1");
    expect(event).toEqual({
      specversion: "1.0",
      id: expectedId("esign", "evt-u1"),
      source: "/webhooks/esign",
      type,
      subject: "agreements/8d5f2a7e-3c1b-4f7e-9a51-2b6c0d9e4f13",
      time: new Date(NOW).toISOString(),
      datacontenttype: "application/json",
      data: JSON.parse(delivery.body),
      service: "esign",
      upstreamid: "evt-u1",
      upstreamidkind: "event_id",
      receivedtime: RECEIVED_ISO,
    });
  });

  it.each(sampleEventTypes("staffing"))("staffing %s normalizes with no marks", async (type) => {
    const delivery = await buildSampleDelivery(crypto, "staffing", type, SECRET, { uniqueId: "u2", now: NOW });
    const { event, identity, marks } = await accepted(normalize(STAFFING, delivery.body, delivery.headers));
    expect(marks).toEqual([]);
    expect(identity).toBe("del-u2");
    expect(event).toEqual({
      specversion: "1.0",
      id: expectedId("staffing", "del-u2"),
      source: "/webhooks/staffing",
      type,
      subject: "staffing-requests/sr_01J9Z6K8Q4W2E7R5T3Y1U9I0OP",
      // Only candidate.responded documents a time (`answeredAt`); the others use the receive time.
      time: type === "candidate.responded" ? new Date(NOW).toISOString() : RECEIVED_ISO,
      datacontenttype: "application/json",
      data: JSON.parse(delivery.body),
      service: "staffing",
      upstreamid: "del-u2",
      upstreamidkind: "delivery-id",
      receivedtime: RECEIVED_ISO,
    });
  });
});

describe("envelope", () => {
  const body = buildEsignBody("agreement.completed", { uniqueId: "env", now: NOW });

  it("derives the same id on every call and on both crypto ports", async () => {
    const first = await accepted(normalize(ESIGN, body));
    const second = await accepted(normalize(ESIGN, { ...body, status: "changed" }));
    const node = await normalizeEvent(
      { source: ESIGN, rawBody: encode(body), headers: new Headers(), receivedAt: RECEIVED + 60_000 },
      createNodeCrypto(),
    );
    expect(first.event.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(second.event.id).toBe(first.event.id);
    expect(node.ok && node.event.id).toBe(first.event.id);
  });

  it("derives different ids for the same identity on different sources", async () => {
    const other = source({ id: "esign-eu", service: "esign" });
    const a = await accepted(normalize(ESIGN, body));
    const b = await accepted(normalize(other, body));
    expect(b.event.source).toBe("/webhooks/esign-eu");
    expect(b.event.id).toBe(expectedId("esign-eu", "evt-env"));
    expect(b.event.id).not.toBe(a.event.id);
  });

  it("normalizes time to RFC 3339 UTC and falls back to the receive time", async () => {
    const offset = await accepted(normalize(ESIGN, { ...body, created_at: "2026-03-14T10:26:53+01:00" }));
    expect(offset.event.time).toBe("2026-03-14T09:26:53.000Z");
    const missing = await accepted(normalize(ESIGN, { ...body, created_at: undefined }));
    expect(missing.event.time).toBe(RECEIVED_ISO);
    const garbage = await accepted(normalize(ESIGN, { ...body, created_at: "yesterday" }));
    expect(garbage.event.time).toBe(RECEIVED_ISO);
    expect(garbage.marks).toEqual(["schema_mismatch"]);
  });

  it("takes the e-sign type from event, then event_type, then X-Svc-Event", async () => {
    const { event: _e, ...noEvent } = body;
    const fromEventType = await accepted(normalize(ESIGN, noEvent));
    expect(fromEventType.event.type).toBe("agreement.completed");
    const { event_type: _t, ...neither } = noEvent;
    const fromHeader = await accepted(normalize(ESIGN, neither, { "x-svc-event": "agreement.viewed" }));
    expect(fromHeader.event.type).toBe("agreement.viewed");
    expect(fromHeader.marks).toEqual([]);
  });

  it("takes the e-sign subject from data.agreement_id when the top level has none, else omits it", async () => {
    const { agreement_id: _a, ...nested } = body;
    expect((await accepted(normalize(ESIGN, nested))).event.subject).toBe(
      "agreements/8d5f2a7e-3c1b-4f7e-9a51-2b6c0d9e4f13",
    );
    const bare = await accepted(normalize(ESIGN, { event: "agreement.sent", event_id: "e-bare" }));
    expect(bare.event).not.toHaveProperty("subject");
    expect(bare.marks).toEqual([]);
  });

  it("keeps data equal to the body as received, including fields the gateway does not know", async () => {
    const raw = '{"event_id":"e-raw","event":"agreement.sent","n":1.50,"nested":{"x":[1,"\\u00e5"]}}';
    const { event } = await accepted(normalize(ESIGN, raw));
    expect(event.data).toEqual(JSON.parse(raw));
  });
});

describe("identity", () => {
  const staffingBody = JSON.stringify(buildStaffingBody("candidate.accepted", { now: NOW }));

  it("uses the e-sign event_id, not the delivery header", async () => {
    const body = buildEsignBody("agreement.sent", { uniqueId: "same" });
    const a = await accepted(normalize(ESIGN, body, { "x-svc-delivery": "dlv-1" }));
    const b = await accepted(normalize(ESIGN, { ...body, delivery_id: "dlv-2" }, { "x-svc-delivery": "dlv-2" }));
    expect(a.identity).toBe("evt-same");
    expect(b.event.id).toBe(a.event.id);
  });

  it("uses X-Svc-Delivery-Id for staffing", async () => {
    const { event } = await accepted(normalize(STAFFING, staffingBody, { "x-svc-delivery-id": "del-42" }));
    expect(event).toMatchObject({
      upstreamid: "del-42",
      upstreamidkind: "delivery-id",
      id: expectedId("staffing", "del-42"),
    });
  });

  it.each<[string, Record<string, string>]>([
    ["absent", {}],
    ["empty", { "x-svc-delivery-id": "" }],
    ["longer than 200 characters", { "x-svc-delivery-id": "d".repeat(201) }],
  ])("uses the body SHA-256 when X-Svc-Delivery-Id is %s", async (_case, headers) => {
    const { event, identity } = await accepted(normalize(STAFFING, staffingBody, headers));
    expect(identity).toBe(sha256Hex(staffingBody));
    expect(event).toMatchObject({
      upstreamidkind: "body-sha256",
      id: expectedId("staffing", sha256Hex(staffingBody)),
    });
  });

  it("uses the body SHA-256 when the source's identity is body-sha256, even with a delivery id", async () => {
    const { event } = await accepted(normalize(STAFFING_BY_BODY, staffingBody, { "x-svc-delivery-id": "del-42" }));
    expect(event).toMatchObject({ upstreamid: sha256Hex(staffingBody), upstreamidkind: "body-sha256" });
    const otherBody = await accepted(
      normalize(STAFFING_BY_BODY, `${staffingBody} `, { "x-svc-delivery-id": "del-42" }),
    );
    expect(otherBody.event.id).not.toBe(event.id);
  });
});

describe("marks (never a rejection)", () => {
  const esign = buildEsignBody("agreement.signed", { uniqueId: "m", now: NOW });
  const accepted_ = buildStaffingBody("candidate.accepted", { now: NOW });

  it.each<[string, SourceConfig, unknown, string[]]>([
    [
      "an unknown e-sign type",
      ESIGN,
      { ...esign, event: "agreement.teleported", event_type: "agreement.teleported" },
      ["unknown_type"],
    ],
    ["an e-sign body with no type anywhere", ESIGN, { event_id: "e-1" }, ["unknown_type"]],
    [
      "an unknown staffing type",
      STAFFING,
      { event: "candidate.teleported", staffingRequestId: "sr_1" },
      ["unknown_type"],
    ],
    ["a staffing body with no event", STAFFING, { staffingRequestId: "sr_1" }, ["schema_mismatch", "unknown_type"]],
    ["an extra e-sign field", ESIGN, { ...esign, brand_new: true }, ["extra_fields"]],
    [
      "an extra nested e-sign field",
      ESIGN,
      { ...esign, signature: { ...(esign.signature as object), level: "qes" } },
      ["extra_fields"],
    ],
    ["an extra staffing field", STAFFING, { ...accepted_, shiftId: "s-9" }, ["extra_fields"]],
    ["a wrong e-sign field type", ESIGN, { ...esign, status: 5 }, ["schema_mismatch"]],
    ["an unknown signature method", ESIGN, { ...esign, signature: { method: "sms" } }, ["schema_mismatch"]],
    ["a wrong staffing field type", STAFFING, { ...accepted_, result: { confidence: "high" } }, ["schema_mismatch"]],
    ["a staffing confidence over 1", STAFFING, { ...accepted_, result: { confidence: 1.5 } }, ["schema_mismatch"]],
    [
      "a wrong type and an extra field",
      ESIGN,
      { ...esign, status: 5, brand_new: 1 },
      ["schema_mismatch", "extra_fields"],
    ],
  ])("marks %s", async (_case, src, body, marks) => {
    const result = await accepted(normalize(src, body));
    expect([...result.marks].sort()).toEqual([...marks].sort());
    expect(result.event.data).toEqual(body);
  });

  it("keeps the unknown type name as the event type", async () => {
    const { event } = await accepted(normalize(STAFFING, { event: "candidate.teleported" }));
    expect(event.type).toBe("candidate.teleported");
  });
});

describe("rejected bodies", () => {
  it.each<[string, SourceConfig, string]>([
    ["not JSON", ESIGN, "{event_id: 1"],
    ["empty", ESIGN, ""],
    ["a JSON array", ESIGN, '[{"event_id":"e-1"}]'],
    ["a JSON number", ESIGN, "42"],
    ["a JSON string", ESIGN, '"evt-1"'],
    ["JSON null", ESIGN, "null"],
    ["e-sign without event_id", ESIGN, '{"event":"agreement.sent"}'],
    ["e-sign with an empty event_id", ESIGN, '{"event":"agreement.sent","event_id":""}'],
    ["e-sign with a numeric event_id", ESIGN, '{"event":"agreement.sent","event_id":17}'],
    ["e-sign with an event_id over 200 characters", ESIGN, JSON.stringify({ event_id: "e".repeat(201) })],
    ["staffing, not JSON", STAFFING, "event=candidate.accepted"],
    ["staffing, a JSON array", STAFFING, "[]"],
    ["staffing, a JSON scalar", STAFFING, "true"],
  ])("rejects %s", async (_case, src, body) => {
    const result = await normalize(src, body, { "x-svc-delivery-id": "del-1" });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/JSON object|event_id/);
  });
});
