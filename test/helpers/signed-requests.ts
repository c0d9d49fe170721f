/**
 * Builds webhook deliveries signed the way the upstreams sign them (from the samples in
 * `src/samples/`), plus small request helpers for the webhook and admin endpoints. Used by the
 * ingress, event log and operations tests against a real process or an in-process gateway.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import { createWebCrypto, utf8 } from "../../src/crypto/crypto-port.ts";
import type { SampleRequest as SampleOptions } from "../../src/samples/sample-webhooks.ts";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { signEsignWebhook } from "../../src/services/esign/sign-esign-webhook.ts";
import { signStaffingWebhook } from "../../src/services/staffing/sign-staffing-webhook.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";

const crypto = createWebCrypto();

/** A parsed JSON answer; its many shapes are checked by the tests' assertions. */
// biome-ignore lint/suspicious/noExplicitAny: answers of many shapes, narrowed by assertions
export type JsonAnswer = any;

/** One delivery: the exact bytes to send and the headers the upstream would send with them. */
export interface SignedDelivery {
  body: Uint8Array;
  headers: Record<string, string>;
}

export interface DeliveryOptions extends SampleOptions {
  /** Changes the sample body before it is serialized and signed. */
  edit?: (body: Record<string, unknown>) => void;
}

export interface StaffingDeliveryOptions extends DeliveryOptions {
  /** `X-Svc-Delivery-Id`; default `del-<uniqueId>`; null leaves the header out. */
  deliveryId?: string | null;
}

/** The `X-Svc-Signature` header of e-sign `bytes`. */
export async function signEsignBytes(secret: string, bytes: Uint8Array): Promise<Record<string, string>> {
  return { "content-type": "application/json", "x-svc-signature": await signEsignWebhook(crypto, secret, bytes) };
}

/** Signature and timestamp headers of staffing `bytes` signed at `nowMs` (default now). */
export async function signStaffingBytes(
  secret: string,
  bytes: Uint8Array,
  nowMs = Date.now(),
): Promise<Record<string, string>> {
  const t = Math.floor(nowMs / 1000);
  return {
    "content-type": "application/json",
    "x-svc-signature": await signStaffingWebhook(crypto, secret, bytes, t),
    "x-svc-timestamp": String(t),
  };
}

/** A signed e-sign delivery of `type` (identity: the body's `event_id`, `evt-<uniqueId>`). */
export async function esignDelivery(
  secret: string,
  type = "agreement.completed",
  options: DeliveryOptions = {},
): Promise<SignedDelivery> {
  const body = buildEsignBody(type, { ...options, uniqueId: options.uniqueId ?? globalThis.crypto.randomUUID() });
  options.edit?.(body);
  const bytes = utf8(JSON.stringify(body));
  return { body: bytes, headers: { ...(await signEsignBytes(secret, bytes)), "x-svc-event": type } };
}

/** A signed staffing delivery of `type`, signed at `options.now` (default now). */
export async function staffingDelivery(
  secret: string,
  type = "candidate.accepted",
  options: StaffingDeliveryOptions = {},
): Promise<SignedDelivery> {
  const unique = options.uniqueId ?? globalThis.crypto.randomUUID();
  const body = buildStaffingBody(type, { ...options, uniqueId: unique });
  options.edit?.(body);
  const bytes = utf8(JSON.stringify(body));
  const headers = await signStaffingBytes(secret, bytes, options.now);
  const deliveryId = options.deliveryId === undefined ? `del-${unique}` : options.deliveryId;
  if (deliveryId !== null) headers["x-svc-delivery-id"] = deliveryId;
  return { body: bytes, headers };
}

/** `POST {baseUrl}/webhooks/{sourceId}` with the delivery's bytes and headers (plus `extra`). */
export function postWebhook(
  baseUrl: string,
  sourceId: string,
  delivery: SignedDelivery,
  extra: Record<string, string> = {},
): Promise<Response> {
  return fetch(webhookRequest(baseUrl, sourceId, delivery, extra));
}

/** The `Request` of a delivery; for in-process gateways (`gateway.fetch`). */
export function webhookRequest(
  baseUrl: string,
  sourceId: string,
  delivery: SignedDelivery,
  extra: Record<string, string> = {},
): Request {
  return new Request(`${baseUrl}/webhooks/${sourceId}`, {
    method: "POST",
    headers: { ...delivery.headers, ...extra },
    body: delivery.body as Uint8Array<ArrayBuffer>,
  });
}

/** `sha256:<hex>` of an admin key, the form the config holds. */
export function adminKeyHash(key: string): string {
  return `sha256:${createHash("sha256").update(key).digest("hex")}`;
}

/** GET an admin path (`/events?...`) with `Authorization: Bearer <key>`; the JSON and status. */
export async function adminGet(
  baseUrl: string,
  path: string,
  key: string,
): Promise<{ status: number; body: JsonAnswer; headers: Headers }> {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

/** Reads an answer as `{status, body, headers}` with the body parsed as JSON. */
export async function readAnswer(response: Response): Promise<{ status: number; body: JsonAnswer; headers: Headers }> {
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** Walks `GET /events` (with `query`) through every page; the ids in order. */
export async function listAllEventIds(baseUrl: string, key: string, query = "", limit = 500): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const params = new URLSearchParams(query);
    params.set("limit", String(limit));
    if (cursor) params.set("cursor", cursor);
    const { status, body } = await adminGet(baseUrl, `/events?${params}`, key);
    if (status !== 200) throw new Error(`GET /events?${params} answered ${status}: ${JSON.stringify(body)}`);
    ids.push(...body.events.map((e: { id: string }) => e.id));
    cursor = body.next_cursor;
    if (cursor === null) return ids;
  }
  throw new Error("GET /events did not end within 1000 pages");
}

/**
 * Asserts that `response` is an error answer in the documented envelope with `status` and `code`
 * and a JSON content type; returns the `error` object.
 */
export async function expectErrorEnvelope(
  response: Response,
  status: number,
  code: string,
): Promise<{ code: string; message: string; details?: JsonAnswer }> {
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status });
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  return body.error;
}
