/**
 * Builds the gateway: an h3 app with every route of the public surface, wired to a store driver
 * and the runtime's crypto, clock and logger. Runtime adapters (`adapters/node`, later
 * `adapters/cloudflare`) call this and serve `gateway.app`.
 */
import { H3 } from "h3";
import { createClientAuthenticator } from "./auth/authenticate-client.ts";
import { requireEventsAccess } from "./auth/events-access.ts";
import type { GatewayConfig } from "./config/schema.ts";
import { type ConsoleOptions, registerConsoleRoutes } from "./console/console-routes.ts";
import { type CryptoPort, createWebCrypto } from "./crypto/crypto-port.ts";
import { registerDeliveryRoutes } from "./delivery/delivery-admin-api.ts";
import { createDeliveryEngine, type DeliveryEngineOptions } from "./delivery/delivery-engine.ts";
import { DELIVERY_METRICS } from "./delivery/delivery-metrics.ts";
import { createEnricher } from "./enrich/create-enricher.ts";
import { createGatewayError, toErrorResponse } from "./errors.ts";
import type { GatewayContext } from "./gateway-context.ts";
import { readRawBody } from "./ingress/read-raw-body.ts";
import { receiveWebhook } from "./ingress/receive-webhook.ts";
import { createVerificationFailureLimiter } from "./ingress/verification-failure-limiter.ts";
import { getEvent, listEvents } from "./log/event-log-api.ts";
import { testFilter } from "./log/filter-test-api.ts";
import { checkHealth } from "./ops/check-health.ts";
import { type Clock, systemClock } from "./ops/clock.ts";
import { createLogger, type Logger } from "./ops/logger.ts";
import { createMetrics, GATEWAY_METRICS, type Metrics } from "./ops/metrics.ts";
import { requireOpsAccess } from "./ops/ops-access.ts";
import { createWriteHealth } from "./ops/write-health.ts";
import { createProxy } from "./proxy/create-proxy.ts";
import { PROXY_METRICS } from "./proxy/proxy-metrics.ts";
import { fetchUpstream, type UpstreamFetch } from "./proxy/upstream-fetch.ts";
import { compileRoutes } from "./routes/match-routes.ts";
import { registerTestEventRoutes } from "./sandbox/test-events-api.ts";
import { builtinServices } from "./services/registry.ts";
import type { ServiceRegistry } from "./services/service-contract.ts";
import type { StoreDriver } from "./store/contract.ts";
import { isolateListeners, type LiveHub } from "./stream/hub-contract.ts";
import { createLiveStream, type LiveStream } from "./stream/live-stream.ts";
import { openEventStream } from "./stream/sse-transport.ts";
import type { StreamOptionsInput } from "./stream/stream-options.ts";
import { mintStreamToken } from "./stream/stream-token.ts";
import { type CorkPeer, createWebSocketRoute, type PeerTextSender } from "./stream/websocket-transport.ts";

export interface GatewayOptions {
  config: GatewayConfig;
  store: StoreDriver;
  /** The live hub (a driver of adapters/hub/registry.ts, e.g. `inProcessHub()`). Closed with the gateway. */
  hub: LiveHub;
  /** The upstream services the config's sources and upstreams name. Default: the built-in ones. */
  services?: ServiceRegistry;
  /** Default: Web Crypto. */
  crypto?: CryptoPort;
  /** Default: `readRawBody` (Web streams). The Node adapter reads the IncomingMessage directly. */
  readBody?: GatewayContext["readBody"];
  /** Default: iterate the request's `Headers`. The Node adapter reads the raw header pairs. */
  listHeaders?: GatewayContext["listHeaders"];
  /** Default: none (large uploads stream as Web streams). The Node adapter hands on the IncomingMessage. */
  nativeRequestBody?: GatewayContext["nativeRequestBody"];
  /** Default: Web streams. The Node adapter writes SSE bodies as a Node stream. */
  createEventStreamChannel?: GatewayContext["createEventStreamChannel"];
  /** Default: the system clock. Tests inject their own. */
  clock?: Clock;
  /** Default: the runtime's `fetch`. The Node adapter supplies a faster one for proxied calls. */
  upstreamFetch?: UpstreamFetch;
  /** Default: JSON lines on console.log at `config.log.level`. */
  logger?: Logger;
  /** Live stream tuning (heartbeat, idle timeout, slow-consumer bound); see stream-options.ts. */
  stream?: StreamOptionsInput;
  /** Batches a WebSocket peer's writes during a fan-out, where the runtime can (Node adapter). */
  corkWebSocket?: CorkPeer;
  /** Sends live frames to a WebSocket peer for less than `peer.send`, where the runtime can (Node adapter). */
  sendWebSocketText?: PeerTextSender;
  /** The outbox and sinks of the delivery engine. Default: nothing is delivered (no transports). */
  delivery?: DeliveryEngineOptions;
  /**
   * Zero-config development mode (set by the Node CLI only when it generated the development
   * secrets): the console offers the dev admin key and test events are enabled. Default off.
   */
  development?: ConsoleOptions;
}

export interface Gateway {
  app: H3;
  ctx: GatewayContext;
  /** The live stream fan-out (`/ws`, `/stream`). */
  live: LiveStream;
  fetch(request: Request): Promise<Response>;
  /** Starts background work (the delivery engine resumes from its outbox). */
  start(): Promise<void>;
  /** Enforces retention (drops events older than `retentionDays`); returns how many went. */
  runMaintenance(): Promise<number>;
  close(): Promise<void>;
}

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

function requestIdOf(request: Request): string {
  const given = request.headers.get("x-request-id");
  return given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

/** Creates the gateway app around a store driver. */
export function createGateway(options: GatewayOptions): Gateway {
  const { config, store } = options;
  const logger = options.logger ?? createLogger(config.log.level);
  const metrics: Metrics = createMetrics({ ...GATEWAY_METRICS, ...PROXY_METRICS, ...DELIVERY_METRICS });
  const crypto = options.crypto ?? createWebCrypto();
  const clock = options.clock ?? systemClock;
  const ctx: GatewayContext = {
    config,
    sources: new Map(config.sources.map((s) => [s.id, s])),
    services: options.services ?? builtinServices,
    store,
    crypto,
    readBody: options.readBody ?? readRawBody,
    listHeaders: options.listHeaders,
    nativeRequestBody: options.nativeRequestBody,
    createEventStreamChannel: options.createEventStreamChannel,
    upstreamFetch: options.upstreamFetch ?? fetchUpstream,
    metrics,
    logger,
    clock,
    clients: createClientAuthenticator(config.clients, config.auth, crypto, () => clock.now()),
    routes: compileRoutes(config.routes),
    hub: isolateListeners(options.hub, (error) => logger.error("event subscriber failed", { error: String(error) })),
    adminKeyHashes: new Set(config.admin.apiKeyHashes),
    writeHealth: createWriteHealth(),
    verificationLimiter: createVerificationFailureLimiter(config.ingress.failedVerificationLimit, () => clock.now()),
  };
  const proxy = createProxy(ctx);
  if (ctx.routes.some((route) => route.enrich)) {
    ctx.enricher = createEnricher({ ...ctx, fetch: ctx.upstreamFetch, now: clock.now, upstreams: proxy.upstreams });
  }
  ctx.delivery =
    options.delivery && createDeliveryEngine({ ...ctx, destinations: config.destinations }, options.delivery);

  const live = createLiveStream(ctx, options.stream);

  const app = new H3({
    onError(error, event) {
      const response = toErrorResponse(error);
      if (response.status >= 500 && !HTTPErrorIsExpected(error)) {
        logger.error("unhandled error", { path: event.url.pathname, error: String(error.cause ?? error.message) });
      }
      return response;
    },
  });

  app.post("/webhooks/:sourceId", (event) =>
    receiveWebhook(ctx, event.context.params?.sourceId ?? "", event.req, requestIdOf(event.req)),
  );
  app.get("/events", async (event) => {
    await requireEventsAccess(ctx, event.req);
    return listEvents(ctx, event.url);
  });
  app.post("/filters/test", async (event) => {
    await requireEventsAccess(ctx, event.req);
    return testFilter(ctx, event.req);
  });
  app.get("/events/:id", async (event) => {
    await requireEventsAccess(ctx, event.req);
    return getEvent(ctx, event.context.params?.id ?? "");
  });
  app.get("/ws", createWebSocketRoute(ctx, live, options.corkWebSocket, options.sendWebSocketText));
  app.get("/stream", (event) => openEventStream(ctx, live, event.req, event.url));
  app.post("/auth/stream-token", (event) => mintStreamToken(ctx, event.req, live.options));
  registerDeliveryRoutes(app, ctx);
  const testEvents = config.testEvents || options.development !== undefined;
  registerTestEventRoutes(app, ctx, testEvents);
  registerConsoleRoutes(app, options.development, { testEvents, streamTokens: !!config.auth.jwt?.hs256Secret });
  app.get("/healthz", (event) => checkHealth(ctx, event.req));
  app.get("/metrics", async (event) => {
    await requireOpsAccess(ctx, event.req);
    return new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4" } });
  });
  app.all("/api/:upstreamId/**", (event) =>
    proxy.handle(event.context.params?.upstreamId ?? "", event.req, requestIdOf(event.req)),
  );
  app.all("/**", () => {
    throw createGatewayError(404, "not_found", "no such route");
  });

  return {
    app,
    ctx,
    live,
    fetch: async (request) => app.fetch(request),
    start: async () => {
      await ctx.delivery?.start();
    },
    runMaintenance: async () => {
      const before = ctx.clock.now() - config.retentionDays * 86_400_000;
      const purged = await store.purge(before);
      await ctx.delivery?.purge(before);
      return purged;
    },
    close: async () => {
      // The engine stops (attempts finish or are aborted) before the stores it writes close.
      await ctx.delivery?.stop();
      await options.delivery?.outbox.close();
      live.shutdown();
      await ctx.hub.close();
      return store.close();
    },
  };
}

function HTTPErrorIsExpected(error: { data?: unknown }): boolean {
  return typeof (error.data as { code?: unknown } | undefined)?.code === "string";
}
