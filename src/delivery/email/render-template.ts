/**
 * Mail templates: plain text with placeholders, nothing else. `{{ data.agreement_id }}` inserts a
 * value of the CloudEvent; `{{ data.externalId | data.staffingRequestId | "unknown" }}` takes the
 * first alternative that has a value (paths, or a double-quoted literal without `"` or `|`).
 * There are no expressions, helpers or partials, so a template can never run code. In HTML
 * bodies every value from the event is escaped; text the template author wrote is used as is.
 */
import { PATH_PATTERN, readEventPath } from "./read-event-path.ts";

type Alternative = { path: string } | { literal: string };

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const LITERAL = /^"([^"|]*)"$/;
/** A JSON value dumped into a mail is cut here, so one huge field cannot make a huge mail. */
const MAX_VALUE_CHARS = 20_000;
const MAX_SUBJECT_CHARS = 250;

/** Parses the inside of `{{ ... }}`; undefined when it is not a valid placeholder. */
function parsePlaceholder(inner: string): Alternative[] | undefined {
  const alternatives: Alternative[] = [];
  for (const part of inner.split("|").map((p) => p.trim())) {
    const literal = LITERAL.exec(part);
    if (literal) alternatives.push({ literal: literal[1] as string });
    else if (PATH_PATTERN.test(part)) alternatives.push({ path: part });
    else return undefined;
  }
  return alternatives;
}

/** Says what is wrong with a template's placeholders, or undefined when every one is valid. */
export function findTemplateProblem(template: string): string | undefined {
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (!parsePlaceholder(match[1] as string)) return `invalid placeholder ${match[0].slice(0, 80)}`;
  }
  if (template.replace(PLACEHOLDER, "").includes("{{")) return "a `{{` without its closing `}}`";
  return undefined;
}

function formatScalar(value: unknown): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const text =
    typeof value === "string"
      ? value
      : typeof value === "number" || typeof value === "boolean"
        ? String(value)
        : JSON.stringify(value, null, 2);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/** Text of one value: scalars as is, lists joined with ", ", objects as indented JSON. */
function formatValue(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    const items = value.map(formatScalar).filter((item): item is string => item !== undefined);
    return items.length > 0 ? formatScalar(items.join(", ")) : undefined;
  }
  return formatScalar(value);
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Renders `template` against `event`; `html` escapes the inserted event values. */
export function renderTemplate(template: string, event: unknown, mode: "text" | "html"): string {
  return template.replace(PLACEHOLDER, (whole, inner: string) => {
    const alternatives = parsePlaceholder(inner);
    if (!alternatives) return whole;
    for (const alternative of alternatives) {
      if ("literal" in alternative) return alternative.literal;
      const text = formatValue(readEventPath(event, alternative.path));
      if (text !== undefined) return mode === "html" ? escapeHtml(text) : text;
    }
    return "";
  });
}

/**
 * Renders a subject line: control characters and line breaks become spaces (a value from the
 * event can never add a header), runs of spaces collapse, and the line is cut to 250 characters.
 */
export function renderSubject(template: string, event: unknown): string {
  const line = renderTemplate(template, event, "text")
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ")
    .replace(/ {2,}/g, " ")
    .trim();
  return line.length > MAX_SUBJECT_CHARS ? `${line.slice(0, MAX_SUBJECT_CHARS - 1)}…` : line;
}
