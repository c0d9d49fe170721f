/**
 * Turns valibot issues of a webhook body into the marks the envelope records
 * (docs/ingress-and-verification.md#post-webhookssourceid): unknown keys are `extra_fields`,
 * anything else `schema_mismatch`. Marks never reject.
 */
import type * as v from "valibot";

/** Classifies schema issues: unknown keys are `extra_fields`, anything else `schema_mismatch`. */
export function marksOf(issues: readonly v.BaseIssue<unknown>[] | undefined): string[] {
  if (!issues) return [];
  const marks = new Set<string>();
  for (const issue of issues) marks.add(issue.expected === "never" ? "extra_fields" : "schema_mismatch");
  return [...marks];
}

/** A non-empty string, else undefined. */
export function stringField(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
