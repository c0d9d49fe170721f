/**
 * Event records for the store tests, shaped like what the ingress pipeline records: an e-sign
 * or staffing CloudEvent around a realistic upstream body (sample-webhooks.ts).
 */
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { buildStaffingBody } from "../../src/services/staffing/staffing-samples.ts";
import { type EventRecord, toDedupeKey } from "../../src/store/contract.ts";

/** 2026-11-24T12:00:00Z: the conformance clock starts here. */
export const T0 = Date.UTC(2026, 10, 24, 12);

export interface RecordSpec {
  sourceId?: string;
  type?: string;
  subject?: string;
  /** Upstream body; default a sample body of `type`. */
  data?: unknown;
  receivedAt?: number;
}

/** The gateway-shaped id of record number `n`. */
export function recordId(n: number): string {
  return `evt_${n.toString(16).padStart(32, "0")}`;
}

/** Record number `n` (id and identity derive from it). */
export function makeRecord(n: number, spec: RecordSpec = {}): EventRecord {
  const sourceId = spec.sourceId ?? "esign";
  const type = spec.type ?? (sourceId === "staffing" ? "candidate.accepted" : "agreement.completed");
  const service = sourceId === "staffing" ? "staffing" : "esign";
  const data =
    spec.data ??
    (service === "esign"
      ? buildEsignBody(type, { uniqueId: `u${n}` })
      : buildStaffingBody(type, { uniqueId: `u${n}` }));
  const receivedAt = spec.receivedAt ?? T0;
  const rawBody = JSON.stringify(data);
  return {
    id: recordId(n),
    seq: 0,
    sourceId,
    identity: `identity-${n}`,
    receivedAt,
    event: {
      specversion: "1.0",
      id: recordId(n),
      source: `/webhooks/${sourceId}`,
      type,
      subject: spec.subject,
      time: new Date(receivedAt).toISOString(),
      datacontenttype: "application/json",
      data,
      service,
      upstreamid: `identity-${n}`,
      upstreamidkind: service === "esign" ? "event_id" : "delivery-id",
      receivedtime: new Date(receivedAt).toISOString(),
    },
    rawBody,
    rawBodyEncoding: "utf8",
    headers: { "content-type": "application/json", "x-svc-signature": "[redacted]" },
    marks: [],
  };
}

/** The dedupe key of a record. */
export function keyOf(record: EventRecord): string {
  return toDedupeKey(record.sourceId, record.identity);
}

/** The ids of a list of records, in order. */
export function idsOf(records: readonly EventRecord[]): string[] {
  return records.map((r) => r.id);
}
