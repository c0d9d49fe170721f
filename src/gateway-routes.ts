/**
 * The gateway's route table: every route of the public surface (PRODUCT.md), in one place, on
 * an app that records what is registered so that an unmatched method answers `405` with
 * `Allow` (src/http/allowed-methods.ts). The handlers live with their component; this file
 * only says which path reaches which.
 */
import { type H3, HTTPResponse } from "h3";
import { requireEventsAccess } from "./auth/events-access.ts";
import type { GatewayParts } from "./build-gateway-context.ts";
import { registerConsoleRoutes } from "./console/console-routes.ts";
import { registerDeliveryRoutes } from "./delivery/delivery-admin-api.ts";
import { createGatewayError } from "./errors.ts";
import type { GatewayOptions } from "./gateway-options.ts";
import { createRequestHooks, requestIdOf } from "./gateway-request-hooks.ts";
import { createAllowedMethods } from "./http/allowed-methods.ts";
import { createRouteRecordingApp } from "./http/route-recording-app.ts";
import { receiveWebhook } from "./ingress/receive-webhook.ts";
import { type WebhookAnswer, webhookInputOfRequest } from "./ingress/webhook-exchange.ts";
import { registerLifecycleRoutes } from "./lifecycle/lifecycle-api.ts";
import { getEvent, listEvents } from "./log/event-log-api.ts";
import { testFilter } from "./log/filter-test-api.ts";
import { registerConditionsRoute } from "./operational-events/conditions-api.ts";
import { checkHealth } from "./ops/check-health.ts";
import { requireOpsAccess } from "./ops/ops-access.ts";
import { registerTestEventRoutes } from "./sandbox/test-events-api.ts";
import { openEventStream } from "./stream/sse-transport.ts";
import { mintStreamToken } from "./stream/stream-token.ts";
import { createWebSocketRoute } from "./stream/websocket-transport.ts";
import { traceHttpServer } from "./tracing/trace-http-server.ts";
import { registerTransformRoutes } from "./transform/transform-test-api.ts";

/** The gateway's app: the request hooks and every route, wired to `parts`. */
export function createGatewayApp(parts: GatewayParts, options: GatewayOptions): H3 {
  const { ctx, live, operational } = parts;
  const { config, development } = options;
  const { app, routes: registeredRoutes } = createRouteRecordingApp(createRequestHooks(ctx.logger));
  const allowedMethods = createAllowedMethods(() => registeredRoutes);

  app.post("/webhooks/:sourceId", (event) => {
    const sourceId = event.context.params?.sourceId ?? "";
    const { tracing } = ctx;
    const input = webhookInputOfRequest(event.req, ctx.readBody, ctx.listHeaders);
    if (!tracing) return receiveWebhook(ctx, sourceId, input, requestIdOf(event.req)).then(toHTTPResponse);
    return traceHttpServer(
      tracing,
      "/webhooks/{sourceId}",
      event.req,
      event.url,
      { "gateway.source.id": sourceId },
      (span) => receiveWebhook(ctx, sourceId, input, requestIdOf(event.req), span),
    ).then(toHTTPResponse);
  });
  app.get("/events", async (event) => {
    await requireEventsAccess(ctx, event.req);
    return listEvents(ctx, event.url);
  });
  registerLifecycleRoutes(app, ctx);
  registerConditionsRoute(app, ctx, operational);
  app.post("/filters/test", async (event) => {
    await requireEventsAccess(ctx, event.req);
    return testFilter(ctx, event.req);
  });
  app.get("/events/:id", async (event) => {
    await requireEventsAccess(ctx, event.req);
    return getEvent(ctx, event.context.params?.id ?? "");
  });
  app.get(
    "/ws",
    createWebSocketRoute(ctx, live, {
      cork: options.corkWebSocket,
      sendText: options.sendWebSocketText,
      releaseUpgrade: options.releaseWebSocketUpgrade,
    }),
  );
  app.get("/stream", (event) => openEventStream(ctx, live, event.req, event.url));
  app.post("/auth/stream-token", (event) => mintStreamToken(ctx, event.req, live.options));
  registerDeliveryRoutes(app, ctx);
  registerTransformRoutes(app, ctx);
  const testEvents = config.testEvents || development !== undefined;
  registerTestEventRoutes(app, ctx, testEvents);
  registerConsoleRoutes(app, development, { testEvents, streamTokens: !!config.auth.jwt?.hs256Secret });
  app.get("/healthz", (event) => checkHealth(ctx, event.req));
  app.get("/metrics", async (event) => {
    await requireOpsAccess(ctx, event.req);
    return new Response(ctx.metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4" } });
  });
  app.all("/api/:upstreamId/**", (event) => {
    const upstreamId = event.context.params?.upstreamId ?? "";
    const { tracing } = ctx;
    if (!tracing) return parts.proxy().handle(upstreamId, event.req, requestIdOf(event.req));
    return traceHttpServer(
      tracing,
      "/api/{upstreamId}/{path}",
      event.req,
      event.url,
      { "gateway.upstream.id": upstreamId },
      (span) => parts.proxy().handle(upstreamId, event.req, requestIdOf(event.req), span),
    );
  });
  app.all("/**", (event) => {
    const allowed = allowedMethods(event.url.pathname);
    if (allowed.length > 0) {
      throw createGatewayError(405, "method_not_allowed", `${event.req.method} is not allowed here`, {
        details: { allowed },
        headers: { allow: allowed.join(", ") },
      });
    }
    throw createGatewayError(404, "not_found", "no such route");
  });
  return app;
}

/** A webhook answer as h3 sends it (HTTPResponse: no full Fetch Response where h3 writes directly). */
function toHTTPResponse(answer: WebhookAnswer): HTTPResponse {
  return new HTTPResponse(answer.body, { status: answer.status, headers: answer.headers });
}
