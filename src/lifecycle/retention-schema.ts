/**
 * Per-source and per-type retention rules (`retention: [{ sources?, types?, days }]`), beside the
 * global `retentionDays`. How the most specific rule is chosen: retention-rules.ts.
 */
import * as v from "valibot";

const id = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or -"));
const pattern = v.pipe(v.string(), v.minLength(1), v.maxLength(200));

/** One retention rule: events of these sources and types stay `days` days. */
export const RetentionRuleSchema = v.strictObject({
  /** Source ids (`gateway` names the gateway's own operational events). Default: every source. */
  sources: v.optional(v.pipe(v.array(id), v.minLength(1))),
  /** Event-type patterns (`candidate.*`, `agreement.completed`). Default: every type. */
  types: v.optional(v.pipe(v.array(pattern), v.minLength(1))),
  /** Days an event the rule covers stays in the log. */
  days: v.pipe(v.number(), v.minValue(0.001), v.maxValue(3650)),
});

export const RetentionRulesSchema = v.pipe(v.array(RetentionRuleSchema), v.maxLength(100));

export type RetentionRule = v.InferOutput<typeof RetentionRuleSchema>;
