/**
 * Which retention applies to an event: the most specific rule that covers it. A rule naming both
 * sources and types is more specific than one naming types only, which is more specific than one
 * naming sources only; the global `retentionDays` covers everything else. Among rules of the same
 * kind, the first listed wins (docs/data-lifecycle.md).
 */
import { compileTypePattern } from "../store/match-event-query.ts";
import type { RetentionRule } from "./retention-schema.ts";

export interface CompiledRetentionRule {
  /** Position in the configured list; -1 for the global default. */
  index: number;
  days: number;
  /** 3 sources and types, 2 types only, 1 sources only, 0 the global default. */
  specificity: number;
  sources?: readonly string[];
  types?: readonly string[];
  covers(sourceId: string, type: string): boolean;
}

export interface RetentionPolicy {
  /** Every rule, most specific first, the global default last. */
  rules: readonly CompiledRetentionRule[];
  /** The rule that applies to an event. */
  ruleFor(sourceId: string, type: string): CompiledRetentionRule;
  /** The longest and the shortest retention of any rule, in days. */
  maxDays: number;
  minDays: number;
}

/** Compiles the rules around the global default. */
export function compileRetention(globalDays: number, rules: readonly RetentionRule[] = []): RetentionPolicy {
  const compiled: CompiledRetentionRule[] = rules.map((rule, index) => {
    const sources = rule.sources && new Set(rule.sources);
    const types = rule.types?.map(compileTypePattern);
    return {
      index,
      days: rule.days,
      specificity: (rule.types ? 2 : 0) + (rule.sources ? 1 : 0),
      sources: rule.sources,
      types: rule.types,
      covers: (sourceId, type) =>
        (sources === undefined || sources.has(sourceId)) && (types === undefined || types.some((m) => m(type))),
    };
  });
  // A stable sort keeps the configured order among rules of the same specificity.
  compiled.sort((a, b) => b.specificity - a.specificity);
  const fallback: CompiledRetentionRule = { index: -1, days: globalDays, specificity: 0, covers: () => true };
  compiled.push(fallback);
  const days = compiled.map((r) => r.days);
  return {
    rules: compiled,
    ruleFor: (sourceId, type) => compiled.find((r) => r.covers(sourceId, type)) ?? fallback,
    maxDays: Math.max(...days),
    minDays: Math.min(...days),
  };
}
