/**
 * Realistic e-sign sample deliveries for every documented event type (esign-webhook-schema.ts),
 * signed as the upstream signs them. Behind `gateway trigger`, the tests and the benchmarks.
 */
import { type CryptoPort, utf8 } from "../../crypto/crypto-port.ts";
import type { SampleDelivery, SampleOptions } from "../service-contract.ts";
import { signEsignWebhook } from "./sign-esign-webhook.ts";

export interface BodyOptions {
  /** Unique part of ids; default a random UUID. */
  uniqueId?: string;
  /** Epoch ms used for timestamps. Default now. */
  now?: number;
  /** Override the agreement the event belongs to. */
  subjectId?: string;
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
export function buildEsignBody(type: string, options: BodyOptions = {}): Record<string, unknown> {
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

/** A signed e-sign delivery of `type`. */
export async function buildEsignSample(
  type: string,
  secret: string,
  options: SampleOptions,
  crypto: CryptoPort,
): Promise<SampleDelivery> {
  const body = JSON.stringify(buildEsignBody(type, options));
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-svc-event": type,
      "x-svc-delivery": `dlv-${options.uniqueId}`,
      "x-svc-signature": await signEsignWebhook(crypto, secret, utf8(body)),
    },
  };
}
