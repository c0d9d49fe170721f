/**
 * "Send a test event" (docs/console.md), enabled only in the development setup or with
 * `testEvents: true` in the configuration:
 *   GET  /test-events                     the sources and the documented event types of each
 *   POST /sources/{sourceId}/test-events  {"type": "..."}: builds the documented sample of that
 *                                         type (the source's service module, looked up in the
 *                                         gateway's service registry, src/services/registry.ts),
 *                                         signs it with the source's first secret as the upstream
 *                                         would, and runs it
 *                                         through the gateway's own `POST /webhooks/{sourceId}`
 *                                         in-process, so it is verified like any webhook.
 * Both need the admin API key. The answer carries the ingress answer's status and body.
 */

import type { H3 } from "h3";
import * as v from "valibot";
import { requireAdmin } from "../auth/admin-auth.ts";
import { createGatewayError } from "../errors.ts";
import type { GatewayContext } from "../gateway-context.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { buildSampleDelivery } from "../samples/sample-webhooks.ts";
import type { UpstreamService } from "../services/service-contract.ts";

const TestEventBody = v.strictObject({ type: v.pipe(v.string(), v.maxLength(100)) });

function disabled() {
  return createGatewayError(404, "not_found", "test events are enabled only in the development or sandbox setup");
}

async function readBody(ctx: GatewayContext, request: Request): Promise<v.InferOutput<typeof TestEventBody>> {
  const value = await readJsonBody(ctx.readBody, request, {
    notJsonMessage: 'the body must be JSON: {"type": "<event type>"}',
  });
  const parsed = v.safeParse(TestEventBody, value);
  if (!parsed.success) {
    throw createGatewayError(400, "invalid_request", "invalid request", {
      details: parsed.issues.map((issue) => ({ field: v.getDotPath(issue), message: issue.message })),
    });
  }
  return parsed.output;
}

/** The source's service module in the gateway's registry (config validation guarantees it is there). */
function serviceOf(ctx: GatewayContext, name: string): UpstreamService {
  const service = ctx.services.get(name);
  if (!service) throw createGatewayError(500, "internal_error", "the source names an unregistered service");
  return service;
}

/** Adds the test-event routes to `app`; they answer 404 unless `enabled`. */
export function registerTestEventRoutes(app: H3, ctx: GatewayContext, enabled: boolean): void {
  app.get("/test-events", async (event) => {
    await requireAdmin(ctx, event.req);
    if (!enabled) throw disabled();
    return {
      sources: ctx.config.sources.map((s) => ({
        id: s.id,
        service: s.service,
        types: serviceOf(ctx, s.service).eventTypes,
      })),
    };
  });

  app.post("/sources/:sourceId/test-events", async (event) => {
    await requireAdmin(ctx, event.req);
    if (!enabled) throw disabled();
    const sourceId = event.context.params?.sourceId ?? "";
    const source = ctx.sources.get(sourceId);
    if (!source) throw createGatewayError(404, "unknown_source", "no webhook source with this id");
    const { type } = await readBody(ctx, event.req);
    const service = serviceOf(ctx, source.service);
    const types = service.eventTypes;
    if (!types.includes(type)) {
      throw createGatewayError(400, "invalid_request", `"${type}" is not a documented ${source.service} event type`, {
        details: { types },
      });
    }
    const delivery = await buildSampleDelivery(ctx.crypto, service, type, source.secrets[0] as string, {
      now: ctx.clock.now(),
    });
    const headers = new Headers(delivery.headers);
    const requestId = event.req.headers.get("x-request-id");
    if (requestId) headers.set("x-request-id", requestId);
    // The gateway's own ingress route, in-process: verified, deduplicated and recorded like any webhook.
    const ingress = await app.fetch(
      new Request(new URL(`/webhooks/${encodeURIComponent(sourceId)}`, event.url), {
        method: "POST",
        headers,
        body: delivery.body,
      }),
    );
    const answer = (await ingress.json()) as unknown;
    return new Response(JSON.stringify({ source: sourceId, type, status: ingress.status, answer }), {
      status: ingress.status,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  });
}
