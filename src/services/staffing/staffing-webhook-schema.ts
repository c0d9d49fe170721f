/**
 * Valibot schemas of the staffing webhook bodies
 * (docs/ingress-and-verification.md#post-webhookssourceid): the documented
 * `candidate.accepted` and `candidate.responded` bodies and the generic shape of the others.
 * Strict objects so that added fields are noticed and marked, never rejected.
 */
import * as v from "valibot";

export const STAFFING_EVENT_TYPES = [
  "staffing.queued",
  "staffing.calling",
  "candidate.accepted",
  "candidate.declined",
  "candidate.no_answer",
  "staffing.requires_review",
  "staffing.completed",
  "staffing.failed",
  "staffing.cancelled",
  "candidate.responded",
] as const;

export const INTENTS = [
  "accepted",
  "declined",
  "maybe",
  "wrong_person",
  "asked_question",
  "needs_callback",
  "unclear",
  "angry_or_sensitive",
] as const;

const text = v.nullish(v.string());
const confidence = v.pipe(v.number(), v.minValue(0), v.maxValue(1));
const Candidate = v.strictObject({ id: v.string(), name: text, phone: text });

export const CandidateAcceptedBody = v.strictObject({
  event: v.literal("candidate.accepted"),
  staffingRequestId: v.string(),
  externalId: text,
  candidate: Candidate,
  result: v.strictObject({
    answer: text,
    confidence: v.nullish(confidence),
    requiresReview: v.nullish(v.boolean()),
    summary: text,
  }),
});

export const CandidateRespondedBody = v.strictObject({
  event: v.literal("candidate.responded"),
  staffingRequestId: v.string(),
  externalId: text,
  externalCandidateId: text,
  candidate: Candidate,
  intent: v.picklist(INTENTS),
  confidence: v.nullish(confidence),
  transcript: text,
  note: text,
  recordingUrl: v.nullish(v.pipe(v.string(), v.url())),
  answeredAt: v.nullish(v.pipe(v.string(), v.isoTimestamp())),
});

/** The other event types: their bodies are not documented in detail; this is the common core. */
export const GenericStaffingBody = v.looseObject({
  event: v.string(),
  staffingRequestId: v.nullish(v.string()),
  externalId: text,
  status: text,
});

export function staffingSchemaFor(type: string) {
  if (type === "candidate.accepted") return CandidateAcceptedBody;
  if (type === "candidate.responded") return CandidateRespondedBody;
  return GenericStaffingBody;
}
