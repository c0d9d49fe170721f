/**
 * The delivery admin API (admin API key required, like the event log):
 *   GET  /destinations                       health: state, breaker, backlog, last error
 *   GET  /destinations/{id}/deliveries       records, newest first (?state=&from=&to=&cursor=&limit=)
 *   POST /destinations/{id}/pause | resume   events are kept while paused
 *   POST /destinations/{id}/replay           bulk: {"states":["dead"],"from":..,"to":..,"filter":{..},"dryRun":true}
 *   POST /events/{id}/replay                 one event, all destinations or {"destination":"id"}
 *   POST /events/replay                      every recorded event matching {"filter":{..},"dryRun":true}
 * Inputs are validated with valibot at this boundary.
 */

import type { H3 } from "h3";
import * as v from "valibot";
import { requireAdmin } from "../auth/admin-auth.ts";
import { type EventsAccessDeps, requireEventsAccess } from "../auth/events-access.ts";
import { createGatewayError } from "../errors.ts";
import { isEventId } from "../events/event-id.ts";
import { type EventFilter, parseEventFilter } from "../filters/event-filter.ts";
import { DialectFiltersSchema, FilterSchema } from "../filters/filter-schema.ts";
import { type BodyReader, readJsonBody } from "../http/read-json-body.ts";
import type { Clock } from "../ops/clock.ts";
import type { Logger } from "../ops/logger.ts";
import type { StoreDriver } from "../store/contract.ts";
import { eachMatching } from "../store/list-matching.ts";
import type { DeliveryEngine } from "./delivery-engine.ts";
import { toDeliveryJson, toDestinationJson } from "./delivery-view.ts";
import { DELIVERY_STATES, type DeliveryState } from "./outbox-contract.ts";

/** What the delivery admin routes use: the engine, the event log, and the admin/events checks. */
export interface DeliveryAdminDeps extends EventsAccessDeps {
  /** Undefined when the runtime provides no transports (the routes answer 404). */
  delivery?: DeliveryEngine;
  store: StoreDriver;
  readBody: BodyReader;
  logger: Logger;
  clock: Clock;
  /** `retentionDays`: how far back a filtered replay looks. */
  config: { retentionDays: number };
}

const time = v.pipe(
  v.union([v.number(), v.string()]),
  v.transform((s) => (typeof s === "number" ? s : /^\d+$/.test(s) ? Number(s) : Date.parse(s))),
  v.check((n) => Number.isFinite(n), "an RFC 3339 time or epoch milliseconds"),
);

const ListQuery = v.strictObject({
  state: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.split(",")),
      v.check(
        (list) => list.every((s) => DELIVERY_STATES.includes(s as DeliveryState)),
        `states among ${DELIVERY_STATES.join(", ")}`,
      ),
    ),
  ),
  from: v.optional(time),
  to: v.optional(time),
  cursor: v.optional(v.pipe(v.string(), v.regex(/^\d{1,15}$/, "a cursor from a previous page"), v.transform(Number))),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,4}$/, "an integer 1..1000"),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(1000),
    ),
    "50",
  ),
});

const filterFields = {
  /** A content filter on the event (docs/filters.md). */
  filter: v.optional(FilterSchema),
  /** CloudEvents Subscriptions dialect expressions; all must match. */
  filters: v.optional(DialectFiltersSchema),
  /** Answer the count only; nothing is replayed. */
  dryRun: v.optional(v.boolean(), false),
};

const BulkReplayBody = v.strictObject({
  /** Default: dead letters only. */
  states: v.optional(v.pipe(v.array(v.picklist(["dead", "delivered", "failed-retrying", "skipped"])), v.minLength(1))),
  from: v.optional(time),
  to: v.optional(time),
  ...filterFields,
});

const EventsReplayBody = v.strictObject({
  source: v.optional(v.pipe(v.string(), v.maxLength(63))),
  type: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9_.*-]{1,100}$/, "an event type pattern such as agreement.*"))),
  from: v.optional(time),
  to: v.optional(time),
  /** Default: every destination of each event. */
  destination: v.optional(v.pipe(v.string(), v.maxLength(63))),
  ...filterFields,
});

/** Events one `POST /events/replay` may replay (a dry run counts any number). */
const MAX_FILTERED_REPLAY = 10_000;

/** The compiled filter of a validated body (validated by the schema, so parsing cannot fail). */
function filterOf(body: { filter?: unknown; filters?: unknown }): EventFilter | undefined {
  const parsed = parseEventFilter(body);
  return parsed.ok ? parsed.filter : undefined;
}

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

const EventReplayBody = v.strictObject({ destination: v.optional(v.pipe(v.string(), v.maxLength(63))) });

/** A 400 `invalid_request` naming each invalid field. */
export function invalid(issues: v.BaseIssue<unknown>[]) {
  return createGatewayError(400, "invalid_request", "invalid request", {
    details: issues.map((issue) => ({ field: v.getDotPath(issue), message: issue.message })),
  });
}

/**
 * Reads (at most `API_BODY_LIMIT_BYTES`, read-json-body.ts) and validates a JSON request body
 * (an empty body is `{}`).
 */
export async function readJson<T extends v.GenericSchema>(
  ctx: { readBody: BodyReader },
  request: Request,
  schema: T,
): Promise<v.InferOutput<T>> {
  const value = await readJsonBody(ctx.readBody, request, { empty: {} });
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) throw invalid(parsed.issues);
  return parsed.output;
}

function engineFor(ctx: Pick<DeliveryAdminDeps, "delivery">, destinationId?: string): DeliveryEngine {
  const engine = ctx.delivery;
  if (!engine) throw createGatewayError(404, "not_found", "delivery is not enabled in this runtime");
  if (destinationId !== undefined && !engine.has(destinationId)) {
    throw createGatewayError(404, "not_found", "no deliverable destination with this id");
  }
  return engine;
}

/** Adds the delivery admin routes to `app`. */
export function registerDeliveryRoutes(app: H3, ctx: DeliveryAdminDeps): void {
  const param = (event: { context: { params?: Record<string, string> } }, name: string) =>
    event.context.params?.[name] ?? "";
  const healthOf = async (engine: DeliveryEngine, id: string) => {
    const health = (await engine.destinations()).find((d) => d.id === id);
    return health && toDestinationJson(health);
  };

  app.get("/destinations", async (event) => {
    await requireAdmin(ctx, event.req);
    const engine = engineFor(ctx);
    return { destinations: (await engine.destinations()).map(toDestinationJson) };
  });

  app.get("/destinations/:id/deliveries", async (event) => {
    await requireEventsAccess(ctx, event.req);
    const id = param(event, "id");
    const engine = engineFor(ctx, id);
    const parsed = v.safeParse(ListQuery, Object.fromEntries(event.url.searchParams));
    if (!parsed.success) throw invalid(parsed.issues);
    const q = parsed.output;
    const page = await engine.listDeliveries({
      destinationId: id,
      states: q.state as DeliveryState[] | undefined,
      from: q.from,
      to: q.to,
      after: q.cursor,
      limit: q.limit,
    });
    return {
      deliveries: page.deliveries.map(toDeliveryJson),
      next_cursor: page.next === null ? null : String(page.next),
    };
  });

  for (const action of ["pause", "resume"] as const) {
    app.post(`/destinations/:id/${action}`, async (event) => {
      await requireAdmin(ctx, event.req);
      const id = param(event, "id");
      const engine = engineFor(ctx, id);
      await engine[action](id);
      ctx.logger.info(`destination ${action}d`, { destination: id });
      return { destination: await healthOf(engine, id) };
    });
  }

  app.post("/destinations/:id/replay", async (event) => {
    await requireEventsAccess(ctx, event.req);
    const id = param(event, "id");
    const engine = engineFor(ctx, id);
    const body = await readJson(ctx, event.req, BulkReplayBody);
    const replayed = await engine.replayBulk(id, { ...body, filter: filterOf(body) });
    if (body.dryRun) return answer(200, { destination: id, dryRun: true, matched: replayed });
    ctx.logger.info("bulk replay", { destination: id, replayed });
    return answer(202, { destination: id, replayed });
  });

  app.post("/events/replay", async (event) => {
    await requireEventsAccess(ctx, event.req);
    const body = await readJson(ctx, event.req, EventsReplayBody);
    const engine = engineFor(ctx, body.destination);
    const retainedFrom = ctx.clock.now() - ctx.config.retentionDays * 86_400_000;
    const matching = eachMatching(ctx.store, {
      sourceId: body.source,
      type: body.type,
      from: body.from === undefined ? retainedFrom : Math.max(body.from, retainedFrom),
      to: body.to,
      filter: filterOf(body)?.node,
    });
    // A dry run counts; a replay collects ids and stops as soon as they pass the cap.
    const ids: string[] = [];
    let matched = 0;
    for await (const record of matching) {
      matched++;
      if (body.dryRun) continue;
      if (matched > MAX_FILTERED_REPLAY) break;
      ids.push(record.id);
    }
    if (body.dryRun) return answer(200, { dryRun: true, matched });
    if (matched > MAX_FILTERED_REPLAY) {
      throw createGatewayError(
        400,
        "invalid_request",
        `more than ${MAX_FILTERED_REPLAY} events match; one request replays at most ${MAX_FILTERED_REPLAY} (narrow it with from/to)`,
        { details: [{ field: "filter", message: `at most ${MAX_FILTERED_REPLAY} matching events` }] },
      );
    }
    // Oldest first, so per-subject order stays natural.
    let deliveries = 0;
    for (const id of ids.reverse()) deliveries += (await engine.replayEvent(id, body.destination))?.length ?? 0;
    ctx.logger.info("filtered replay", { matched: ids.length, deliveries });
    return answer(202, { matched: ids.length, deliveries });
  });

  app.post("/events/:id/replay", async (event) => {
    await requireEventsAccess(ctx, event.req);
    const eventId = param(event, "id");
    const body = await readJson(ctx, event.req, EventReplayBody);
    const destination = body.destination ?? event.url.searchParams.get("destination") ?? undefined;
    const engine = engineFor(ctx, destination);
    const records = isEventId(eventId) ? await engine.replayEvent(eventId, destination) : undefined;
    if (!records) throw createGatewayError(404, "not_found", "no event with this id");
    ctx.logger.info("event replay", { id: eventId, destinations: records.map((r) => r.destinationId) });
    return new Response(JSON.stringify({ id: eventId, deliveries: records.map(toDeliveryJson) }), {
      status: 202,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  });
}
