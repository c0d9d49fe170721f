/**
 * `POST /filters/test`: tries a filter on the most recent recorded events (default and at most
 * 100) and answers how many match and which, so a filter can be checked before it goes into a
 * route, a stream subscription or a replay. The body is validated with valibot at this boundary.
 */

import * as v from "valibot";
import { createGatewayError } from "../errors.ts";
import { parseEventFilter } from "../filters/event-filter.ts";
import { DialectFiltersSchema, FilterSchema } from "../filters/filter-schema.ts";
import { type BodyReader, readJsonBody } from "../http/read-json-body.ts";
import type { Clock } from "../ops/clock.ts";
import type { StoreDriver } from "../store/contract.ts";

/** What the filter test reads: the request body, the clock and retention, the recent events. */
export interface FilterTestDeps {
  readBody: BodyReader;
  clock: Clock;
  /** `retentionDays`: how far back the test looks. */
  config: { retentionDays: number };
  store: Pick<StoreDriver, "list">;
}

const TestBody = v.strictObject({
  filter: v.optional(FilterSchema),
  filters: v.optional(DialectFiltersSchema),
  /** How many of the latest events to try, 1..100. Default 100. */
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 100),
});

function invalid(issues: v.BaseIssue<unknown>[]) {
  return createGatewayError(400, "invalid_request", "invalid request", {
    details: issues.map((issue) => ({ field: v.getDotPath(issue), message: issue.message })),
  });
}

/** `POST /filters/test` */
export async function testFilter(ctx: FilterTestDeps, request: Request): Promise<Response> {
  const value = await readJsonBody(ctx.readBody, request);
  const parsed = v.safeParse(TestBody, value);
  if (!parsed.success) throw invalid(parsed.issues);
  const body = parsed.output;
  const filter = parseEventFilter(body);
  const retainedFrom = ctx.clock.now() - ctx.config.retentionDays * 86_400_000;
  const page = await ctx.store.list({ from: retainedFrom, limit: body.limit });
  const matching = filter.ok && filter.filter ? page.events.filter(filter.filter.matchesRecord) : page.events;
  return Response.json({
    tested: page.events.length,
    matched: matching.length,
    events: matching.map((record) => ({
      id: record.id,
      seq: record.seq,
      source_id: record.sourceId,
      type: record.event.type,
      subject: record.event.subject ?? null,
      time: record.event.time,
    })),
  });
}
