/**
 * Realistic sample deliveries for every documented event type of both services, signed as the
 * upstream would sign them. Behind `gateway trigger`, the tests and the benchmarks.
 */
import type { CryptoPort } from "../crypto/crypto-port.ts";
import { utf8 } from "../crypto/crypto-port.ts";
import type { ServiceType } from "../events/envelope.ts";
import { ESIGN_EVENT_TYPES } from "../events/schemas/esign-webhook.ts";
import { STAFFING_EVENT_TYPES } from "../events/schemas/staffing-webhook.ts";
import { signEsignWebhook, signStaffingWebhook } from "./sign-webhook.ts";

export interface SampleDelivery {
  body: string;
  headers: Record<string, string>;
}

export interface SampleOptions {
  /** Unique part of ids; default a random UUID. */
  uniqueId?: string;
  /** Epoch ms used for timestamps and the staffing signature. Default now. */
  now?: number;
  /** Override the agreement / staffing request the event belongs to. */
  subjectId?: string;
}

/** The documented event types of a service. */
export function sampleEventTypes(service: ServiceType): readonly string[] {
  return service === "esign" ? ESIGN_EVENT_TYPES : STAFFING_EVENT_TYPES;
}

const ESIGN_STATUS: Record<string, string> = {
  "agreement.sent": "sent",
  "agreement.signed": "partially_signed",
  "agreement.completed": "completed",
  "agreement.cancelled": "cancelled",
  "agreement.declined": "declined",
  "agreement.expired": "expired",
  "agreement.superseded": "cancelled",
};

/** A realistic e-sign body for `type`. */
export function buildEsignBody(type: string, options: SampleOptions = {}): Record<string, unknown> {
  const unique = options.uniqueId ?? crypto.randomUUID();
  const at = new Date(options.now ?? Date.now()).toISOString();
  const agreementId = options.subjectId ?? "8d5f2a7e-3c1b-4f7e-9a51-2b6c0d9e4f13";
  const participant = { id: "0b8a4c2e-6d1f-4a3b-8e5c-7f9d1a2b3c4d", email: "anna.svensson@example.com" };
  const status = ESIGN_STATUS[type] ?? "sent";
  const body: Record<string, unknown> = {
    event: type,
    event_type: type,
    event_id: `evt-${unique}`,
    delivery_id: `dlv-${unique}`,
    created_at: at,
    agreement_id: agreementId,
    status,
    external_id: "crm-deal-4711",
    external_source: "acme_crm",
    participant,
    data: { agreement_id: agreementId, status, participant, external_id: "crm-deal-4711", external_source: "acme_crm" },
  };
  if (type === "agreement.signed") {
    body.signature = {
      method: "otp_email",
      signer_name: "Anna Svensson",
      email: participant.email,
      code_verified_at: at,
      signed_at: at,
      ip: "203.0.113.24",
      user_agent: "Mozilla/5.0 (X11; Linux x86_64)",
    };
  }
  if (type === "agreement.identified") {
    body.identification = { method: "eid", signer_name: "Anna Svensson", identified_at: at };
  }
  if (type === "agreement.completed") {
    body.signature = { method: "eid", signer_name: "Anna Svensson", signed_at: at };
    body.participants = [
      { id: participant.id, email: participant.email, name: "Anna Svensson", status: "signed" },
      {
        id: "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
        email: "erik.lind@example.com",
        name: "Erik Lind",
        status: "signed",
      },
    ];
    body.document = { signed_pdf_url: `https://files.example.com/signed/${agreementId}.pdf?sig=abc` };
  }
  return body;
}

/** A realistic staffing body for `type`. */
export function buildStaffingBody(type: string, options: SampleOptions = {}): Record<string, unknown> {
  const at = new Date(options.now ?? Date.now()).toISOString();
  const staffingRequestId = options.subjectId ?? "sr_01J9Z6K8Q4W2E7R5T3Y1U9I0OP";
  const candidate = { id: "cand-17", name: "Karin Berg", phone: "+46701234567" };
  const base = { event: type, staffingRequestId, externalId: "shift-2026-11-24-night-ward3" };
  if (type === "candidate.accepted") {
    return {
      ...base,
      candidate,
      result: {
        answer: "Ja, jag kan ta passet.",
        confidence: 0.96,
        requiresReview: false,
        summary: "Accepted the night shift.",
      },
    };
  }
  if (type === "candidate.responded") {
    return {
      ...base,
      externalCandidateId: "emp-2231",
      candidate,
      intent: "accepted",
      confidence: 0.96,
      transcript: "Ja, jag kan ta passet i natt.",
      note: "Can start 21:45.",
      recordingUrl: "https://recordings.example.com/calls/call_88.mp3",
      answeredAt: at,
    };
  }
  const status = type.startsWith("staffing.") ? type.slice("staffing.".length) : type.replace(".", "_");
  return { ...base, status, occurredAt: at };
}

/** Builds and signs one delivery of `type` for a source of `service` with `secret`. */
export async function buildSampleDelivery(
  crypto: CryptoPort,
  service: ServiceType,
  type: string,
  secret: string,
  options: SampleOptions = {},
): Promise<SampleDelivery> {
  const unique = options.uniqueId ?? randomId();
  const now = options.now ?? Date.now();
  const opts = { ...options, uniqueId: unique, now };
  if (service === "esign") {
    const body = JSON.stringify(buildEsignBody(type, opts));
    return {
      body,
      headers: {
        "content-type": "application/json",
        "x-svc-event": type,
        "x-svc-delivery": `dlv-${unique}`,
        "x-svc-signature": await signEsignWebhook(crypto, secret, utf8(body)),
      },
    };
  }
  const body = JSON.stringify(buildStaffingBody(type, opts));
  const t = Math.floor(now / 1000);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-svc-signature": await signStaffingWebhook(crypto, secret, utf8(body), t),
      "x-svc-timestamp": String(t),
      "x-svc-delivery-id": `del-${unique}`,
    },
  };
}

function randomId(): string {
  return globalThis.crypto.randomUUID();
}
