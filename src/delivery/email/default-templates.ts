/**
 * The built-in mail templates: each registered service's defaults by event type
 * (src/services/<name>/*-templates.ts), and a generic one for every other type.
 */
import { NOT_GIVEN, noticeTemplate } from "../../services/notice-template.ts";
import { builtinServices } from "../../services/registry.ts";
import type { EmailTemplate } from "./email-destination-schema.ts";

/** Defaults by exact event type, over every built-in service. */
export const DEFAULT_TEMPLATES: Readonly<Record<string, EmailTemplate>> = Object.assign(
  {},
  ...[...builtinServices.values()].map((service) => service.mailTemplates),
);

/** For every type without a default: the envelope's attributes and the data as JSON. */
export const GENERIC_TEMPLATE: EmailTemplate = noticeTemplate({
  subject: "{{type}}: {{subject | source}}",
  heading: "{{type}}",
  lines: [],
  facts: [
    ["Type", "{{type}}"],
    ["Subject", `{{subject | ${NOT_GIVEN}}}`],
    ["Source", "{{source}}"],
    ["Time", "{{time}}"],
  ],
  dumpData: true,
});
