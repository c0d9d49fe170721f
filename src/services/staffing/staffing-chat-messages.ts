/**
 * Chat messages of the staffing service, one per documented event type (the built-in Slack,
 * Teams and Discord transforms). Paths follow the staffing webhook bodies (staffing-webhook-schema.ts).
 */
import type { ServiceChatMessage } from "../service-contract.ts";

const ref = "{{data.externalId | data.staffingRequestId | subject}}";
const base: [string, string][] = [
  ["Staffing request", "{{data.staffingRequestId | subject}}"],
  ["External id", "{{data.externalId}}"],
  ["Status", "{{data.status}}"],
];
const candidate: [string, string][] = [
  ["Candidate", "{{data.candidate.name | data.candidate.id}}"],
  ["Phone", "{{data.candidate.phone}}"],
];

const message = (title: string, text: string, extra: [string, string][] = []): ServiceChatMessage => ({
  title: `${title}: ${ref}`,
  text,
  facts: [...extra, ...base],
});

export const STAFFING_CHAT_MESSAGES: Readonly<Record<string, ServiceChatMessage>> = {
  "staffing.queued": message("Staffing request queued", "The request is queued; calls start shortly."),
  "staffing.calling": message("Calling candidates", "The service is phoning candidates for the shift."),
  "candidate.accepted": message("Candidate accepted", "A candidate accepted the shift on the phone.", [
    ...candidate,
    ["Answer", "{{data.result.answer}}"],
    ["Summary", "{{data.result.summary}}"],
    ["Confidence", "{{data.result.confidence}}"],
    ["Needs review", "{{data.result.requiresReview}}"],
  ]),
  "candidate.declined": message("Candidate declined", "A candidate declined the shift.", candidate),
  "candidate.no_answer": message("No answer", "A candidate did not answer the call.", candidate),
  "staffing.requires_review": message(
    "Staffing request needs review",
    "A candidate's answer needs a manual decision before the shift is booked.",
  ),
  "staffing.completed": message("Shift staffed", "The staffing request is complete: the shift is booked."),
  "staffing.failed": message(
    "Staffing request failed",
    "No candidate could be booked. The request can be retried through the staffing API.",
  ),
  "staffing.cancelled": message("Staffing request cancelled", "The staffing request was cancelled."),
  "candidate.responded": message("Candidate responded", "A candidate answered; the service classified the answer.", [
    ...candidate,
    ["Intent", "{{data.intent}}"],
    ["Confidence", "{{data.confidence}}"],
    ["Note", "{{data.note}}"],
  ]),
};
