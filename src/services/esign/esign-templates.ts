/**
 * Default mail templates of the e-sign service: agreement completed, declined or expired. Paths
 * follow the e-sign webhook bodies (esign-webhook-schema.ts): the CloudEvent `data` is the body
 * as received.
 */
import { NOT_GIVEN, noticeTemplate } from "../notice-template.ts";
import type { ServiceMailTemplate } from "../service-contract.ts";

const agreementFacts = (extra: [string, string][]): [string, string][] => [
  ["Agreement", "{{data.agreement_id | subject}}"],
  ["External reference", `{{data.external_id | ${NOT_GIVEN}}}`],
  ["External source", `{{data.external_source | ${NOT_GIVEN}}}`],
  ...extra,
  ["Status", `{{data.status | ${NOT_GIVEN}}}`],
];

const agreementRef = "{{data.external_id | data.agreement_id | subject}}";
/** Defaults by exact event type. */
export const ESIGN_TEMPLATES: Readonly<Record<string, ServiceMailTemplate>> = {
  "agreement.completed": noticeTemplate({
    subject: `Agreement completed: ${agreementRef}`,
    heading: "Agreement completed",
    lines: ["Every participant has signed. The signed PDF can be fetched through the e-sign API."],
    facts: agreementFacts([
      ["Participants", `{{data.participants.*.name | data.participants.*.email | ${NOT_GIVEN}}}`],
      ["Signature method", `{{data.signature.method | ${NOT_GIVEN}}}`],
    ]),
  }),
  "agreement.declined": noticeTemplate({
    subject: `Agreement declined: ${agreementRef}`,
    heading: "Agreement declined",
    lines: ["A participant declined the agreement, which is now closed. Send a new version to continue."],
    facts: agreementFacts([["Declined by", `{{data.participant.email | ${NOT_GIVEN}}}`]]),
  }),
  "agreement.expired": noticeTemplate({
    subject: `Agreement expired: ${agreementRef}`,
    heading: "Agreement expired",
    lines: ["The agreement expired before every participant signed. Send a new version to continue."],
    facts: agreementFacts([]),
  }),
};
