/**
 * Normalizes one verified delivery into a CloudEvents envelope: parses the body (only after the
 * signature was verified), finds the upstream identity and event type, derives the gateway id
 * and marks bodies that do not match the documented schemas. Marks never reject: upstreams add
 * fields and event types.
 */
import * as v from "valibot";
import type { SourceConfig } from "../config/schema.ts";
import { type CryptoPort, toHex } from "../crypto/crypto-port.ts";
import type { GatewayEvent } from "./envelope.ts";
import { deriveEventId } from "./event-id.ts";
import { ESIGN_EVENT_TYPES, EsignWebhookBody } from "./schemas/esign-webhook.ts";
import { STAFFING_EVENT_TYPES, staffingSchemaFor } from "./schemas/staffing-webhook.ts";

export interface NormalizeInput {
  source: SourceConfig;
  rawBody: Uint8Array;
  /** The body already decoded as UTF-8, when the caller has it (saves a second decode). */
  text?: string;
  headers: Headers;
  receivedAt: number;
}

export type NormalizeResult =
  | { ok: true; event: GatewayEvent; identity: string; marks: string[] }
  | { ok: false; message: string };

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: false });
const esignTypes = new Set<string>(ESIGN_EVENT_TYPES);
const staffingTypes = new Set<string>(STAFFING_EVENT_TYPES);
const MAX_DELIVERY_ID = 200;

/** Parses the raw body as a JSON object; undefined for anything else. */
function parseJsonObject(rawBody: Uint8Array, text: string | undefined): Record<string, unknown> | undefined {
  try {
    // The stored text keeps a leading BOM (lossless); JSON.parse must not see it.
    const json = text === undefined ? decoder.decode(rawBody) : text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function stringField(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Classifies schema issues: unknown keys are `extra_fields`, anything else `schema_mismatch`. */
function marksOf(issues: readonly v.BaseIssue<unknown>[] | undefined): string[] {
  if (!issues) return [];
  const marks = new Set<string>();
  for (const issue of issues) marks.add(issue.expected === "never" ? "extra_fields" : "schema_mismatch");
  return [...marks];
}

function toTime(candidate: unknown, fallback: string): string {
  if (typeof candidate !== "string") return fallback;
  const ms = Date.parse(candidate);
  return Number.isNaN(ms) ? fallback : new Date(ms).toISOString();
}

/** Builds the envelope of one verified delivery, or says why the body cannot be accepted. */
export async function normalizeEvent(input: NormalizeInput, crypto: CryptoPort): Promise<NormalizeResult> {
  const body = parseJsonObject(input.rawBody, input.text);
  if (!body) return { ok: false, message: "the body is not a JSON object" };
  const receivedTime = new Date(input.receivedAt).toISOString();
  const { source } = input;
  let identity: string;
  let identityKind: GatewayEvent["upstreamidkind"];
  let type: string | undefined;
  let subjectId: string | undefined;
  let time: unknown;
  let marks: string[];

  if (source.service === "esign") {
    const eventId = stringField(body.event_id);
    if (!eventId || eventId.length > MAX_DELIVERY_ID) {
      return { ok: false, message: "the body has no usable `event_id`" };
    }
    identity = eventId;
    identityKind = "event_id";
    type = stringField(body.event) ?? stringField(body.event_type) ?? stringField(input.headers.get("x-svc-event"));
    const data = body.data as Record<string, unknown> | undefined;
    subjectId = stringField(body.agreement_id) ?? stringField(data?.agreement_id);
    time = body.created_at;
    marks = marksOf(v.safeParse(EsignWebhookBody, body).issues);
    if (!type || !esignTypes.has(type)) marks.push("unknown_type");
  } else {
    const deliveryId = stringField(input.headers.get("x-svc-delivery-id"));
    if (source.identity === "delivery-id" && deliveryId && deliveryId.length <= MAX_DELIVERY_ID) {
      identity = deliveryId;
      identityKind = "delivery-id";
    } else {
      identity = toHex(await crypto.sha256(input.rawBody));
      identityKind = "body-sha256";
    }
    type = stringField(body.event);
    subjectId = stringField(body.staffingRequestId);
    time = body.answeredAt;
    marks = type ? marksOf(v.safeParse(staffingSchemaFor(type), body).issues) : ["schema_mismatch"];
    if (!type || !staffingTypes.has(type)) marks.push("unknown_type");
  }

  const event: GatewayEvent = {
    specversion: "1.0",
    id: await deriveEventId(source.id, identity, crypto),
    source: `/webhooks/${source.id}`,
    type: type ?? "unknown",
    time: toTime(time, receivedTime),
    datacontenttype: "application/json",
    data: body,
    service: source.service,
    upstreamid: identity,
    upstreamidkind: identityKind,
    receivedtime: receivedTime,
  };
  if (subjectId) {
    event.subject = `${source.service === "esign" ? "agreements" : "staffing-requests"}/${subjectId}`;
  }
  return { ok: true, event, identity, marks };
}
