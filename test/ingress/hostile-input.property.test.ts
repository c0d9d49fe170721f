/**
 * Property test against one real gateway process: arbitrary signature, timestamp, delivery-id
 * and content-type headers with arbitrary bodies (bytes, strings, JSON, sample-shaped JSON),
 * some of them correctly signed so that parsing and normalization are exercised too, never get
 * a 5xx, never get a 2xx without a valid signature, always answer JSON, and never kill the
 * process.
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { utf8 } from "../../src/crypto/crypto-port.ts";
import { ESIGN_EVENT_TYPES } from "../../src/services/esign/esign-webhook-schema.ts";
import { STAFFING_EVENT_TYPES } from "../../src/services/staffing/staffing-webhook-schema.ts";
import type { GatewayProcess } from "../helpers/gateway-process.ts";
import { postWebhook, signEsignBytes, signStaffingBytes } from "../helpers/signed-requests.ts";
import { startEditedGatewayProcess } from "./gateway-fixtures.ts";

const RUNS_PER_SOURCE = 300;
let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startEditedGatewayProcess(() => {});
});
afterAll(async () => {
  await gw.kill();
});

/** Header values fetch can send: visible ASCII, space, tab and Latin-1. */
const headerText = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09))
    .map((code) => String.fromCharCode(code)),
  maxLength: 300,
});
const hex = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdefABCDEF"), minLength: min, maxLength: max });
const digits = fc.oneof(
  fc.integer({ min: -1e12, max: 1e13 }).map(String),
  fc.string({ unit: fc.constantFrom(..."0123456789+-.eE"), maxLength: 30 }),
);

const signatureHeader = fc.oneof(
  headerText,
  hex(0, 80).map((h) => `sha256=${h}`),
  fc.tuple(digits, hex(0, 70)).map(([t, h]) => `t=${t},v1=${h}`),
  fc
    .array(
      fc.oneof(
        digits.map((t) => `t=${t}`),
        hex(60, 68).map((h) => `v1=${h}`),
        headerText,
      ),
      { maxLength: 20 },
    )
    .map((parts) => parts.join(",")),
);

const jsonish = (service: "esign" | "staffing") =>
  service === "esign"
    ? fc.record(
        {
          event_id: fc.oneof(
            { arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 200 }), weight: 3 },
            fc.string({ maxLength: 250 }),
            fc.jsonValue(),
          ),
          event: fc.oneof(fc.constantFrom(...ESIGN_EVENT_TYPES), fc.jsonValue()),
          agreement_id: fc.jsonValue(),
          created_at: fc.oneof(
            fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
            fc.jsonValue(),
          ),
          data: fc.jsonValue(),
          signature: fc.jsonValue(),
          participants: fc.jsonValue(),
          external_id: fc.jsonValue(),
        },
        { requiredKeys: ["event_id"] },
      )
    : fc.record(
        {
          event: fc.oneof(fc.constantFrom(...STAFFING_EVENT_TYPES), fc.jsonValue()),
          staffingRequestId: fc.jsonValue(),
          externalId: fc.jsonValue(),
          candidate: fc.jsonValue(),
          result: fc.jsonValue(),
          intent: fc.jsonValue(),
          answeredAt: fc.oneof(fc.string(), fc.jsonValue()),
          recordingUrl: fc.jsonValue(),
        },
        { requiredKeys: [] },
      );

const body = (service: "esign" | "staffing") =>
  fc.oneof(
    fc.uint8Array({ maxLength: 2048 }),
    fc.string({ unit: "binary", maxLength: 512 }).map(utf8),
    fc.json().map(utf8),
    // Weighted up: object bodies are the ones that get past parsing into normalization.
    { arbitrary: jsonish(service).map((value) => utf8(JSON.stringify(value))), weight: 4 },
  );

const delivery = (service: "esign" | "staffing") =>
  fc.record({
    body: body(service),
    signed: fc.boolean(),
    signature: fc.option(signatureHeader, { nil: undefined }),
    timestamp: fc.option(fc.oneof(digits, headerText), { nil: undefined }),
    deliveryId: fc.option(headerText, { nil: undefined }),
    contentType: fc.option(fc.oneof(fc.constant("application/json"), headerText), { nil: undefined }),
    signedAtOffset: fc.integer({ min: -400, max: 400 }),
    /** Signed deliveries keep the arbitrary X-Svc-Timestamp only sometimes (timestamp_mismatch). */
    keepTimestamp: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  });

async function check(service: "esign" | "staffing") {
  await fc.assert(
    fc.asyncProperty(delivery(service), async (d) => {
      const headers: Record<string, string> = {};
      if (d.signature !== undefined) headers["x-svc-signature"] = d.signature;
      if (d.timestamp !== undefined) headers["x-svc-timestamp"] = d.timestamp;
      if (d.deliveryId !== undefined) headers["x-svc-delivery-id"] = d.deliveryId;
      if (d.signed) {
        const signedHeaders =
          service === "esign"
            ? await signEsignBytes(gw.secrets.esign, d.body)
            : await signStaffingBytes(gw.secrets.staffing, d.body, Date.now() + d.signedAtOffset * 1000);
        headers["x-svc-signature"] = signedHeaders["x-svc-signature"]!;
        if (!(d.keepTimestamp && d.timestamp !== undefined) && signedHeaders["x-svc-timestamp"]) {
          headers["x-svc-timestamp"] = signedHeaders["x-svc-timestamp"];
        }
      }
      if (d.contentType !== undefined) headers["content-type"] = d.contentType;
      const response = await postWebhook(gw.url, service, { body: d.body, headers });
      const text = await response.text();
      expect(response.status, text).toBeLessThan(500);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const answer = JSON.parse(text);
      if (response.status >= 400) expect(typeof answer.error.code).toBe("string");
      if (!d.signed) expect(response.status, text).toBe(401);
      else expect([200, 202, 400, 401, 409]).toContain(response.status);
    }),
    { numRuns: RUNS_PER_SOURCE },
  );
}

it("never answers 5xx to arbitrary e-sign deliveries", async () => {
  await check("esign");
});

it("never answers 5xx to arbitrary staffing deliveries", async () => {
  await check("staffing");
});

it("is still alive and healthy afterwards", async () => {
  expect(gw.child.exitCode).toBeNull();
  expect(gw.child.signalCode).toBeNull();
  expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
});
