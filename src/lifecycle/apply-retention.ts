/**
 * Retention maintenance: removes every event older than the retention of the rule that covers
 * it (retention-rules.ts). Events older than the longest retention go in one sweep of the
 * store's `purge`; each shorter rule then walks only the events its sources and types name,
 * received before its own cutoff, and removes those it is the applying rule for. A dry run
 * walks the same way and removes nothing.
 */
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { CompiledRetentionRule, RetentionPolicy } from "./retention-rules.ts";

const DAY_MS = 86_400_000;
const PAGE = 500;
/** Events listed by a dry run (the counts are always complete). */
const SAMPLE_LIMIT = 100;

export interface RetentionRuleReport {
  /** Index in `retention`, or `"retentionDays"` for the global default. */
  rule: number | "retentionDays";
  sources?: readonly string[];
  types?: readonly string[];
  days: number;
  /** Events received before this time are past the rule's retention. */
  cutoff: string;
  /** Removed (or, in a dry run, that would be removed). */
  events: number;
}

export interface RetentionReport {
  dryRun: boolean;
  /** Removed (or that would be removed) in all. */
  events: number;
  /**
   * Not in a dry run: the events older than the longest retention, removed in one sweep before
   * the rules ran (counted here, not under a rule).
   */
  sweep?: { cutoff: string; events: number };
  rules: RetentionRuleReport[];
  /** Dry run: up to 100 of the events that would go, oldest rule first. */
  sample?: { id: string; source_id: string; type: string; received_at: string; rule: number | "retentionDays" }[];
}

const ruleName = (rule: CompiledRetentionRule): number | "retentionDays" =>
  rule.index < 0 ? "retentionDays" : rule.index;

/** Applies (or, with `dryRun`, previews) the retention policy at time `now`. */
export async function applyRetention(
  store: StoreDriver,
  policy: RetentionPolicy,
  now: number,
  options: { dryRun?: boolean } = {},
): Promise<RetentionReport> {
  const dryRun = options.dryRun === true;
  const counts = new Map<CompiledRetentionRule, number>(policy.rules.map((r) => [r, 0]));
  const sample: NonNullable<RetentionReport["sample"]> = [];
  let swept = 0;
  if (!dryRun) swept = await store.purge(now - policy.maxDays * DAY_MS);

  for (const rule of policy.rules) {
    if (!dryRun && rule.days >= policy.maxDays) continue; // the sweep above took them
    const cutoff = now - rule.days * DAY_MS;
    const seen = new Set<string>();
    for (const query of queriesOf(rule)) {
      let after: number | undefined;
      for (let pages = 0; pages < 1_000_000; pages++) {
        const page = await store.list({ ...query, to: cutoff, after, limit: PAGE });
        const mine = page.events.filter(
          (r: EventRecord) => !seen.has(r.id) && policy.ruleFor(r.sourceId, r.event.type) === rule,
        );
        for (const r of mine) {
          seen.add(r.id);
          if (dryRun && sample.length < SAMPLE_LIMIT) {
            sample.push({
              id: r.id,
              source_id: r.sourceId,
              type: r.event.type,
              received_at: new Date(r.receivedAt).toISOString(),
              rule: ruleName(rule),
            });
          }
        }
        const n = dryRun ? mine.length : await store.removeEvents(mine.map((r) => r.id));
        counts.set(rule, (counts.get(rule) ?? 0) + n);
        if (page.next === null) break;
        after = page.next;
      }
    }
  }

  const rules = policy.rules.map((rule) => ({
    rule: ruleName(rule),
    ...(rule.sources ? { sources: rule.sources } : {}),
    ...(rule.types ? { types: rule.types } : {}),
    days: rule.days,
    cutoff: new Date(now - rule.days * DAY_MS).toISOString(),
    events: counts.get(rule) ?? 0,
  }));
  const total = swept + rules.reduce((sum, r) => sum + r.events, 0);
  if (dryRun) return { dryRun, events: total, rules, sample };
  const sweep = { cutoff: new Date(now - policy.maxDays * DAY_MS).toISOString(), events: swept };
  return { dryRun, events: total, sweep, rules };
}

/** The store queries that find a rule's candidates: one per source and type pattern it names. */
function queriesOf(rule: CompiledRetentionRule): { sourceId?: string; type?: string }[] {
  const sources = rule.sources ?? [undefined];
  const types = rule.types ?? [undefined];
  return sources.flatMap((sourceId) =>
    types.map((type) => ({ ...(sourceId ? { sourceId } : {}), ...(type ? { type } : {}) })),
  );
}
