/**
 * Chat messages of the e-sign service, one per documented event type (the built-in Slack, Teams
 * and Discord transforms). Paths follow the e-sign webhook bodies (esign-webhook-schema.ts): the
 * CloudEvent `data` is the body as received; older bodies nest the facts under `data.data`.
 */
import type { ServiceChatMessage } from "../service-contract.ts";

const ref = "{{data.external_id | data.data.external_id | data.agreement_id | data.data.agreement_id | subject}}";
const base: [string, string][] = [
  ["Agreement", "{{data.agreement_id | data.data.agreement_id | subject}}"],
  ["External reference", "{{data.external_id | data.data.external_id}}"],
  ["Status", "{{data.status | data.data.status}}"],
];
const participant: [string, string] = ["Participant", "{{data.participant.email | data.data.participant.email}}"];

const message = (title: string, text: string, extra: [string, string][] = []): ServiceChatMessage => ({
  title: `${title}: ${ref}`,
  text,
  facts: [...base, ...extra],
});

export const ESIGN_CHAT_MESSAGES: Readonly<Record<string, ServiceChatMessage>> = {
  "agreement.sent": message("Agreement sent", "The agreement was sent to its participants for signing.", [participant]),
  "agreement.viewed": message("Agreement viewed", "A participant opened the agreement.", [participant]),
  "agreement.identified": message("Participant identified", "A participant confirmed their identity with an eID.", [
    participant,
    ["Identified as", "{{data.identification.signer_name}}"],
  ]),
  "agreement.signed": message("Agreement signed", "A participant signed the agreement.", [
    participant,
    ["Signed by", "{{data.signature.signer_name | data.signature.email}}"],
    ["Method", "{{data.signature.method}}"],
  ]),
  "agreement.completed": message(
    "Agreement completed",
    "Every participant has signed. The signed PDF can be fetched through the e-sign API.",
    [
      ["Participants", "{{data.participants.*.name | data.participants.*.email}}"],
      ["Signed PDF", "{{data.document.signed_pdf_url}}"],
    ],
  ),
  "agreement.cancelled": message(
    "Agreement cancelled",
    "The sender cancelled the agreement; it can no longer be signed.",
  ),
  "agreement.declined": message(
    "Agreement declined",
    "A participant declined the agreement, which is now closed. Send a new version to continue.",
    [["Declined by", "{{data.participant.email | data.data.participant.email}}"]],
  ),
  "agreement.delegated": message("Agreement delegated", "A participant handed their signature to someone else.", [
    participant,
  ]),
  "participant.notifications_changed": message(
    "Participant notifications changed",
    "A participant changed how they are notified about the agreement.",
    [participant],
  ),
  "agreement.chat_message": message("New chat message", "A participant wrote in the agreement's chat.", [participant]),
  "agreement.comment_created": message("New comment", "A participant commented on the agreement.", [participant]),
  "agreement.comment_resolved": message("Comment resolved", "A comment on the agreement was resolved.", [participant]),
  "agreement.expired": message(
    "Agreement expired",
    "The agreement expired before every participant signed. Send a new version to continue.",
  ),
  "agreement.pdf_replaced": message("Agreement PDF replaced", "The agreement's document was replaced by a new PDF."),
  "agreement.superseded": message("Agreement superseded", "A newer version of the agreement replaced this one."),
};
