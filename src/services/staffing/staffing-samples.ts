/**
 * Realistic staffing sample deliveries for every documented event type
 * (staffing-webhook-schema.ts), signed as the upstream signs them. Behind `gateway trigger`, the
 * tests and the benchmarks.
 */
import { type CryptoPort, utf8 } from "../../crypto/crypto-port.ts";
import type { SampleDelivery, SampleOptions } from "../service-contract.ts";
import { signStaffingWebhook } from "./sign-staffing-webhook.ts";

export interface BodyOptions {
  /** Unique part of ids; default a random UUID. */
  uniqueId?: string;
  /** Epoch ms used for timestamps. Default now. */
  now?: number;
  /** Override the staffing request the event belongs to. */
  subjectId?: string;
}

/** A realistic staffing body for `type`. */
export function buildStaffingBody(type: string, options: BodyOptions = {}): Record<string, unknown> {
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

/** A signed staffing delivery of `type`. */
export async function buildStaffingSample(
  type: string,
  secret: string,
  options: SampleOptions,
  crypto: CryptoPort,
): Promise<SampleDelivery> {
  const body = JSON.stringify(buildStaffingBody(type, options));
  const t = Math.floor(options.now / 1000);
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-svc-signature": await signStaffingWebhook(crypto, secret, utf8(body), t),
      "x-svc-timestamp": String(t),
      "x-svc-delivery-id": `del-${options.uniqueId}`,
    },
  };
}
