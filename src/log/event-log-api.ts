/**
 * The event log API: `GET /events` (filters, cursor pagination, newest first) and
 * `GET /events/{id}` (envelope, raw body, received headers with the signature redacted, state).
 * `filter` is a content filter (docs/filters.md), pushed down to SQL stores where it can be.
 * Query parameters are validated with valibot at this boundary.
 */
import * as v from "valibot";
import type { DeliveryEngine } from "../delivery/delivery-engine.ts";
import { toDeliveryJson } from "../delivery/delivery-view.ts";
import { rawBodyBase64 } from "../encoding/raw-body-text.ts";
import { createGatewayError } from "../errors.ts";
import { isEventId } from "../events/event-id.ts";
import { FilterParamSchema } from "../filters/filter-schema.ts";
import { parseFilter } from "../filters/parse-filter.ts";
import type { RetentionPolicy } from "../lifecycle/retention-rules.ts";
import type { Clock } from "../ops/clock.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import { isErased } from "../store/erased-event.ts";
import { listMatching } from "../store/list-matching.ts";

/** What the event log routes read: the store, the retention policy, the clock, the delivery records. */
export interface EventLogDeps {
  store: StoreDriver;
  retention: RetentionPolicy;
  clock: Clock;
  /** Undefined when the runtime delivers nothing (no deliveries listed). */
  delivery?: Pick<DeliveryEngine, "deliveriesOfEvent">;
}

const timeParam = v.pipe(
  v.string(),
  v.transform((s) => (/^\d+$/.test(s) ? Number(s) : Date.parse(s))),
  v.number("an RFC 3339 time or epoch milliseconds"),
  v.check((n) => !Number.isNaN(n), "an RFC 3339 time or epoch milliseconds"),
);

const ListQuery = v.strictObject({
  source: v.optional(v.pipe(v.string(), v.maxLength(63))),
  type: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9_.*-]{1,100}$/, "an event type pattern such as agreement.*"))),
  subject: v.optional(v.pipe(v.string(), v.maxLength(300))),
  external_id: v.optional(v.pipe(v.string(), v.maxLength(300))),
  from: v.optional(timeParam),
  to: v.optional(timeParam),
  /** A content filter as URL-encoded JSON (docs/filters.md). */
  filter: v.optional(FilterParamSchema),
  cursor: v.optional(v.pipe(v.string(), v.regex(/^\d{1,15}$/, "a cursor from a previous page"), v.transform(Number))),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,3}$/, "an integer 1..500"), v.transform(Number), v.minValue(1), v.maxValue(500)),
    "50",
  ),
});

const DAY_MS = 86_400_000;

/** True when the rule that covers `record` (src/lifecycle/retention-rules.ts) no longer keeps it. */
function pastRetention(ctx: EventLogDeps, record: EventRecord): boolean {
  const days = ctx.retention.ruleFor(record.sourceId, record.event.type).days;
  return record.receivedAt < ctx.clock.now() - days * DAY_MS;
}

function summarize(record: EventRecord) {
  const state = isErased(record) ? "erased" : "recorded";
  return { id: record.id, seq: record.seq, state, marks: record.marks, event: record.event };
}

/** `GET /events` */
export async function listEvents(ctx: EventLogDeps, url: URL): Promise<Response> {
  const params = Object.fromEntries(url.searchParams);
  const parsed = v.safeParse(ListQuery, params);
  if (!parsed.success) {
    throw createGatewayError(400, "invalid_request", "invalid query parameters", {
      details: parsed.issues.map((issue) => ({ field: v.getDotPath(issue), message: issue.message })),
    });
  }
  const q = parsed.output;
  // Events past retention are gone for `GET /events/{id}` at once; the listing agrees with it
  // instead of showing them until the next maintenance run purges them.
  const retainedFrom = ctx.clock.now() - ctx.retention.maxDays * DAY_MS;
  const filter = q.filter === undefined ? undefined : parseFilter(q.filter);
  const page = await listMatching(ctx.store, {
    sourceId: q.source,
    type: q.type,
    subject: q.subject,
    externalId: q.external_id,
    from: q.from === undefined ? retainedFrom : Math.max(q.from, retainedFrom),
    to: q.to,
    filter: filter?.ok ? filter.node : undefined,
    after: q.cursor,
    limit: q.limit,
  });
  return Response.json({
    events: page.events.filter((record) => !pastRetention(ctx, record)).map(summarize),
    next_cursor: page.next === null ? null : String(page.next),
  });
}

/** `GET /events/{id}` */
export async function getEvent(ctx: EventLogDeps, id: string): Promise<Response> {
  const record = isEventId(id) ? await ctx.store.get(id) : undefined;
  if (!record || pastRetention(ctx, record)) {
    throw createGatewayError(404, "not_found", "no event with this id");
  }
  return Response.json({
    ...summarize(record),
    source_id: record.sourceId,
    received_at: new Date(record.receivedAt).toISOString(),
    raw_body_base64: rawBodyBase64(record.rawBody, record.rawBodyEncoding),
    headers: record.headers,
    deliveries: ((await ctx.delivery?.deliveriesOfEvent(record.id)) ?? []).map(toDeliveryJson),
  });
}
