/**
 * Valibot schemas of the e-sign webhook bodies
 * (docs/ingress-and-verification.md#post-webhookssourceid; the
 * `signature` and `identification` blocks and the `agreement.completed` extras).
 * Objects are strict so that fields the upstream adds are noticed and marked; the gateway never
 * rejects a verified delivery for them.
 */
import * as v from "valibot";

export const ESIGN_EVENT_TYPES = [
  "agreement.sent",
  "agreement.viewed",
  "agreement.identified",
  "agreement.signed",
  "agreement.completed",
  "agreement.cancelled",
  "agreement.declined",
  "agreement.delegated",
  "participant.notifications_changed",
  "agreement.chat_message",
  "agreement.comment_created",
  "agreement.comment_resolved",
  "agreement.expired",
  "agreement.pdf_replaced",
  "agreement.superseded",
] as const;

const text = v.nullish(v.string());
const dateTime = v.nullish(v.pipe(v.string(), v.isoTimestamp()));

const Participant = v.strictObject({ id: text, email: text });

const OtpEmailSignature = v.strictObject({
  method: v.literal("otp_email"),
  signer_name: text,
  email: text,
  code_verified_at: dateTime,
  signed_at: dateTime,
  ip: text,
  user_agent: text,
});

const EidSignature = v.strictObject({
  method: v.literal("eid"),
  signer_name: text,
  signed_at: dateTime,
});

export const EsignSignatureBlock = v.variant("method", [OtpEmailSignature, EidSignature]);

export const EsignIdentificationBlock = v.strictObject({
  method: v.literal("eid"),
  signer_name: text,
  identified_at: dateTime,
});

const EventData = v.strictObject({
  agreement_id: text,
  status: text,
  participant: v.nullish(Participant),
  external_id: text,
  external_source: text,
});

const CompletedParticipant = v.looseObject({ id: text, email: text, name: text, status: text });

/** Every e-sign webhook body. `event_id` is the identity and is required. */
export const EsignWebhookBody = v.strictObject({
  event: text,
  event_type: text,
  event_id: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  delivery_id: text,
  created_at: dateTime,
  agreement_id: text,
  status: text,
  external_id: text,
  external_source: text,
  participant: v.nullish(Participant),
  data: v.nullish(EventData),
  signature: v.nullish(EsignSignatureBlock),
  identification: v.nullish(EsignIdentificationBlock),
  /** `agreement.completed` extras. */
  participants: v.nullish(v.array(CompletedParticipant)),
  document: v.nullish(v.strictObject({ signed_pdf_url: v.nullish(v.pipe(v.string(), v.url())) })),
});

export type EsignWebhookBody = v.InferOutput<typeof EsignWebhookBody>;
