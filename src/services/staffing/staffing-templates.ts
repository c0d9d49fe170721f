/**
 * Default mail templates of the staffing service: candidate accepted, staffing request needing
 * review or failed. Paths follow the staffing webhook bodies (staffing-webhook-schema.ts).
 */
import { NOT_GIVEN, noticeTemplate } from "../notice-template.ts";
import type { ServiceMailTemplate } from "../service-contract.ts";

const staffingFacts: [string, string][] = [
  ["Staffing request", "{{data.staffingRequestId | subject}}"],
  ["External id", `{{data.externalId | ${NOT_GIVEN}}}`],
  ["Status", `{{data.status | ${NOT_GIVEN}}}`],
  ["Occurred at", "{{data.occurredAt | time}}"],
];

const staffingRef = "{{data.externalId | data.staffingRequestId | subject}}";

/** Defaults by exact event type. */
export const STAFFING_TEMPLATES: Readonly<Record<string, ServiceMailTemplate>> = {
  "candidate.accepted": noticeTemplate({
    subject: `Candidate accepted: {{data.candidate.name | "a candidate"}} for ${staffingRef}`,
    heading: "Candidate accepted",
    lines: ["A candidate accepted the shift on the phone."],
    facts: [
      ["Candidate", `{{data.candidate.name | ${NOT_GIVEN}}}`],
      ["Phone", `{{data.candidate.phone | ${NOT_GIVEN}}}`],
      ["Answer", `{{data.result.answer | ${NOT_GIVEN}}}`],
      ["Summary", `{{data.result.summary | ${NOT_GIVEN}}}`],
      ["Confidence", `{{data.result.confidence | ${NOT_GIVEN}}}`],
      ["Needs review", `{{data.result.requiresReview | ${NOT_GIVEN}}}`],
      ["Staffing request", "{{data.staffingRequestId | subject}}"],
      ["External id", `{{data.externalId | ${NOT_GIVEN}}}`],
    ],
  }),
  "staffing.requires_review": noticeTemplate({
    subject: `Staffing request needs review: ${staffingRef}`,
    heading: "Staffing request needs review",
    lines: [
      "A candidate's answer needs a manual decision before the shift is booked: manager approval is required, or the confidence is below the auto-booking threshold.",
    ],
    facts: staffingFacts,
  }),
  "staffing.failed": noticeTemplate({
    subject: `Staffing request failed: ${staffingRef}`,
    heading: "Staffing request failed",
    lines: [
      "No candidate could be booked: the candidate list is exhausted or no candidate was available. The request can be retried through the staffing API.",
    ],
    facts: staffingFacts,
  }),
};
