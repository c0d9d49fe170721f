/**
 * Builds the gateway: an h3 app with every route of the public surface, wired to a store driver
 * and the runtime's crypto, clock and logger. Runtime adapters (`adapters/node`, later
 * `adapters/cloudflare`) call this and serve `gateway.app`.
 */
import { type H3, HTTPError, HTTPResponse } from "h3";
import { createClientAuthenticator } from "./auth/authenticate-client.ts";
import { requireEventsAccess } from "./auth/events-access.ts";
import { type ConfigChanges, describeConfigChanges } from "./config/config-changes.ts";
import type { DestinationConfig, GatewayConfig } from "./config/schema.ts";
import { type ConsoleOptions, registerConsoleRoutes } from "./console/console-routes.ts";
import { type CryptoPort, createWebCrypto } from "./crypto/crypto-port.ts";
import { registerDeliveryRoutes } from "./delivery/delivery-admin-api.ts";
import {
  combineLaneObservers,
  createDeliveryAlertLog,
  DEFAULT_ATTEMPT_WARN_INTERVAL_SECONDS,
} from "./delivery/delivery-alert-log.ts";
import { createDeliveryEngine, type DeliveryEngineOptions } from "./delivery/delivery-engine.ts";
import { DELIVERY_METRICS } from "./delivery/delivery-metrics.ts";
import { systemScheduler } from "./delivery/scheduler.ts";
import type { Sink } from "./delivery/sink-contract.ts";
import { createEnricher } from "./enrich/create-enricher.ts";
import { createGatewayError, toErrorAnswer, toErrorResponse } from "./errors.ts";
import type { GatewayContext } from "./gateway-context.ts";
import { createAllowedMethods } from "./http/allowed-methods.ts";
import { createRouteRecordingApp } from "./http/route-recording-app.ts";
import { readRawBody } from "./ingress/read-raw-body.ts";
import { receiveWebhook } from "./ingress/receive-webhook.ts";
import { createVerificationFailureLimiter } from "./ingress/verification-failure-limiter.ts";
import { type WebhookAnswer, type WebhookInput, webhookInputOfRequest } from "./ingress/webhook-exchange.ts";
import { applyRetention } from "./lifecycle/apply-retention.ts";
import { resumeErasures } from "./lifecycle/erase-events.ts";
import { registerLifecycleRoutes } from "./lifecycle/lifecycle-api.ts";
import { compileRetention } from "./lifecycle/retention-rules.ts";
import { getEvent, listEvents } from "./log/event-log-api.ts";
import { testFilter } from "./log/filter-test-api.ts";
import { registerConditionsRoute } from "./operational-events/conditions-api.ts";
import { createOperationalEvents, type OperationalEvents } from "./operational-events/create-operational-events.ts";
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
import {
  type CorkPeer,
  createWebSocketRoute,
  type PeerTextSender,
  type ReleaseUpgrade,
} from "./stream/websocket-transport.ts";
import { traceHttpServer } from "./tracing/trace-http-server.ts";
import type { Tracing } from "./tracing/tracing-port.ts";
import { createStreamEventTransform } from "./transform/stream-event-transform.ts";
import type { LoadQuickJS, TransformExecutor } from "./transform/transform-contract.ts";
import { createTransformRegistry } from "./transform/transform-registry.ts";
import { registerTransformRoutes } from "./transform/transform-test-api.ts";
import { withTransform } from "./transform/transforming-sink.ts";

/** The key and value of the store write that probes a refused journal (16 KiB, about a webhook). */
const WRITE_PROBE_KEY = "gateway:write-probe";
const WRITE_PROBE_VALUE = "x".repeat(16 * 1024);

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
  /** Drops what the WebSocket library keeps of a subscriber's upgrade request once it is open (Node adapter). */
  releaseWebSocketUpgrade?: ReleaseUpgrade;
  /**
   * Loads the QuickJS WebAssembly module of the transform sandbox (adapters/node/quickjs-node.ts,
   * adapters/cloudflare/quickjs-worker.ts); called on the first transform only. Without it,
   * destinations with a transform fail their attempts with `transform_error`.
   */
  loadQuickJS?: LoadQuickJS;
  /**
   * Runs transform calls away from the gateway's event loop (adapters/node/transform-pool.ts);
   * the registry closes it. Without it (Workers, in-process tests), calls run in this thread on
   * `loadQuickJS`'s module.
   */
  transformExecutor?: TransformExecutor;
  /** The outbox and sinks of the delivery engine. Default: nothing is delivered (no transports). */
  delivery?: DeliveryEngineOptions;
  /**
   * Erasure's share of the delivery records when another part of the runtime delivers (Workers:
   * the delivery object). Default: this gateway's own delivery engine and operational events.
   */
  eraseDeliveries?: GatewayContext["eraseDeliveries"];
  /**
   * Zero-config development mode (set by the Node CLI only when it generated the development
   * secrets): the console offers the dev admin key and test events are enabled. Default off.
   */
  development?: ConsoleOptions;
  /** OpenTelemetry tracing (the runtime adapter builds it from `OTEL_*`); default off. */
  tracing?: Tracing;
  /**
   * Least time between two `warn` lines about one destination's failed attempts (or its dead
   * letters), ms (src/delivery/delivery-alert-log.ts). Default 60 s.
   */
  deliveryWarnIntervalMs?: number;
}

export interface Gateway {
  app: H3;
  ctx: GatewayContext;
  /** The live stream fan-out (`/ws`, `/stream`). */
  live: LiveStream;
  fetch(request: Request): Promise<Response>;
  /**
   * `POST /webhooks/{sourceId}` from a runtime-neutral input to a plain answer, errors rendered
   * and logged as the h3 route does: the Node fast path's entry (adapters/node/webhook-fast-path.ts).
   * Undefined while tracing is on (the traced route keeps the Fetch Request).
   */
  receiveWebhook?: (sourceId: string, input: WebhookInput, path: string) => Promise<WebhookAnswer>;
  /** Starts background work (the delivery engine resumes from its outbox). */
  start(): Promise<void>;
  /** Enforces retention (`retentionDays` and the `retention` rules); returns how many events went. */
  runMaintenance(): Promise<number>;
  /**
   * Applies a reloaded, validated configuration to what happens next (SIGHUP, docs/configuration.md
   * "Reloading"), or refuses it when a setting that applies only at start changed. Connections and
   * attempts in flight are left alone. `createSinks` builds the sinks of the destinations added
   * or changed (the runtime's transports).
   */
  reload(
    next: GatewayConfig,
    createSinks?: (destinations: readonly DestinationConfig[]) => Promise<Sink[]>,
  ): Promise<ReloadOutcome>;
  /** Finishes erasures a stopped gateway left unfinished (`start` does it too); returns how many. */
  resumeErasures(): Promise<number>;
  close(): Promise<void>;
}

export type ReloadOutcome =
  | { ok: false; changes: ConfigChanges }
  | { ok: true; changes: ConfigChanges; kept: Record<string, number> };

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

function requestIdOf(request: { headers: { get(name: string): string | null } }): string {
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
  // Created once the context exists; the write-health tracker below already reports to it.
  let operational: OperationalEvents | undefined;
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
    retention: compileRetention(config.retentionDays, config.retention),
    writeHealth: createWriteHealth((failing, what, at) => operational?.onWriteHealth(failing, what, at), {
      // A refused journal append is retried by nobody: a small write of the store's own finds out
      // when it can record again (write-health.ts).
      probes: { journal: () => store.kvSet(WRITE_PROBE_KEY, WRITE_PROBE_VALUE, 60_000) },
    }),
    verificationLimiter: createVerificationFailureLimiter(
      config.ingress.failedVerificationLimit,
      () => clock.now(),
      () => metrics.inc("gateway_webhooks_budget_waits_total"),
    ),
    tracing: options.tracing,
  };
  let proxy = createProxy(ctx);
  const enricherOf = (routes: GatewayContext["routes"]) =>
    routes.some((route) => route.enrich)
      ? createEnricher({ ...ctx, fetch: ctx.upstreamFetch, now: clock.now, upstreams: proxy.upstreams })
      : undefined;
  ctx.enricher = enricherOf(ctx.routes);
  ctx.transforms = createTransformRegistry({
    destinations: config.destinations,
    services: ctx.services,
    loadQuickJS: options.loadQuickJS ?? (() => Promise.reject(new Error("this runtime has no transform sandbox"))),
    executor: options.transformExecutor,
  });
  const transforms = ctx.transforms;
  if (config.operationalEvents.enabled) {
    const events = createOperationalEvents(
      { ...ctx, scheduler: options.delivery?.scheduler ?? systemScheduler },
      config.operationalEvents,
    );
    operational = events;
    ctx.onWebhookRejected = (sourceId, code) => events.onWebhookRejected(sourceId, code);
  }
  const delivery = options.delivery && {
    ...options.delivery,
    sinks: options.delivery.sinks.map((sink) => withTransform(sink, transforms)),
  };
  ctx.delivery =
    delivery &&
    createDeliveryEngine(
      {
        ...ctx,
        destinations: config.destinations,
        observeLane: combineLaneObservers(
          operational?.observeLane,
          createDeliveryAlertLog(
            logger,
            () => clock.now(),
            options.deliveryWarnIntervalMs ?? DEFAULT_ATTEMPT_WARN_INTERVAL_SECONDS * 1000,
          ),
        ),
      },
      delivery,
    );

  const engine = ctx.delivery;
  ctx.eraseDeliveries =
    options.eraseDeliveries ??
    (async (eventIds) => {
      const erased = (await engine?.eraseDeliveries(eventIds)) ?? { cancelled: 0, texts: [] };
      operational?.forgetErased(new Set(eventIds), new Set(erased.texts));
      // Where deliveries run, enrichments are cached (on Workers: the delivery object's isolate).
      if (eventIds.length > 0) ctx.enricher?.clear();
      return erased;
    });
  const resume = () =>
    resumeErasures(ctx).catch((error) => {
      logger.error("finishing an interrupted erasure failed; retried at the next start", { error: String(error) });
      return 0;
    });

  const streamTransformOf = (destinations: GatewayConfig["destinations"]) =>
    destinations.some((d) => d.type === "stream" && d.transform)
      ? createStreamEventTransform(transforms, logger, config.transforms.logToProcess)
      : undefined;
  const live = createLiveStream(
    // Config and routes read through, so a reload reaches the fan-out.
    {
      get config() {
        return ctx.config;
      },
      get routes() {
        return ctx.routes;
      },
      hub: ctx.hub,
      store,
      clock,
      logger,
      enricher: ctx.enricher,
      transformEvent: streamTransformOf(config.destinations),
      tracing: ctx.tracing,
    },
    options.stream,
  );

  const { app, routes: registeredRoutes } = createRouteRecordingApp({
    // Every answer carries X-Request-Id; ingress and the proxy set their own (one id per request).
    // A hook rather than middleware: no per-request closures on the ingress hot path.
    onRequest(event) {
      const path = event.url.pathname;
      if (path.startsWith("/webhooks/") || path.startsWith("/api/")) return;
      event.res.headers.set("x-request-id", requestIdOf(event.req));
    },
    onError(error, event) {
      const response = toErrorResponse(error);
      logAnsweredError(error, response.status, event.url.pathname);
      if (!response.headers.has("x-request-id")) {
        response.headers.set("x-request-id", event.res.headers.get("x-request-id") ?? requestIdOf(event.req));
      }
      return response;
    },
  });
  const allowedMethods = createAllowedMethods(() => registeredRoutes);
  function logAnsweredError(error: HTTPError, status: number, path: string) {
    if (isClientAbort(error)) {
      // The client went away mid-body: nobody is left to answer and nothing is wrong here.
      logger.info("client aborted the request", { path });
    } else if (status >= 500 && !HTTPErrorIsExpected(error)) {
      logger.error("unhandled error", { path, error: String(error.cause ?? error.message) });
    }
  }
  // The webhook route without Request/Response objects (Gateway.receiveWebhook): what the route
  // above answers, with errors rendered and logged as `onError` does.
  const receiveWebhookAnswer = async (sourceId: string, input: WebhookInput, path: string): Promise<WebhookAnswer> => {
    const requestId = requestIdOf(input);
    try {
      return await receiveWebhook(ctx, sourceId, input, requestId);
    } catch (thrown) {
      // As h3 wraps what a handler throws: anything but an HTTPError is unhandled (no message leaks).
      const error = HTTPError.isError(thrown)
        ? thrown
        : Object.assign(new HTTPError(thrown as Error), { unhandled: true });
      const answer = toErrorAnswer(error);
      logAnsweredError(error, answer.status, path);
      answer.headers["x-request-id"] ??= requestId;
      return answer;
    }
  };

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
  const testEvents = config.testEvents || options.development !== undefined;
  registerTestEventRoutes(app, ctx, testEvents);
  registerConsoleRoutes(app, options.development, { testEvents, streamTokens: !!config.auth.jwt?.hs256Secret });
  app.get("/healthz", (event) => checkHealth(ctx, event.req));
  app.get("/metrics", async (event) => {
    await requireOpsAccess(ctx, event.req);
    return new Response(metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4" } });
  });
  app.all("/api/:upstreamId/**", (event) => {
    const upstreamId = event.context.params?.upstreamId ?? "";
    const { tracing } = ctx;
    if (!tracing) return proxy.handle(upstreamId, event.req, requestIdOf(event.req));
    return traceHttpServer(
      tracing,
      "/api/{upstreamId}/{path}",
      event.req,
      event.url,
      { "gateway.upstream.id": upstreamId },
      (span) => proxy.handle(upstreamId, event.req, requestIdOf(event.req), span),
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

  return {
    app,
    ctx,
    live,
    fetch: async (request) => app.fetch(request),
    receiveWebhook: ctx.tracing ? undefined : receiveWebhookAnswer,
    start: async () => {
      await ctx.delivery?.start();
      // In the background: an erasure interrupted by a stop is finished (and audited) now.
      void resume();
    },
    resumeErasures: resume,
    runMaintenance: async () => {
      const now = ctx.clock.now();
      const report = await applyRetention(store, ctx.retention, now);
      // Delivery records hold no event content (ids, states, attempt outcomes): they follow the
      // global retention (docs/data-lifecycle.md).
      await ctx.delivery?.purge(now - ctx.config.retentionDays * 86_400_000);
      return report.events;
    },
    async reload(next, createSinks) {
      const changes = describeConfigChanges(ctx.config, next);
      if (changes.fixed.length > 0) return { ok: false, changes };
      const touched = new Set([
        ...(changes.lists.destinations?.added ?? []),
        ...(changes.lists.destinations?.changed ?? []),
      ]);
      // The only wait: new transports are built before anything changes.
      const sinks = createSinks ? await createSinks(next.destinations.filter((d) => touched.has(d.id))) : [];
      const saved = options.delivery && sinks.length > 0 ? await options.delivery.outbox.listDestinationStates() : [];
      // From here on, one synchronous turn: no request sees half of the old and half of the new.
      const disposeTransforms = transforms.reconfigure(next.destinations);
      ctx.config = next;
      ctx.sources = new Map(next.sources.map((s) => [s.id, s]));
      ctx.clients = createClientAuthenticator(next.clients, next.auth, crypto, () => clock.now());
      ctx.routes = compileRoutes(next.routes);
      ctx.adminKeyHashes = new Set(next.admin.apiKeyHashes);
      ctx.retention = compileRetention(next.retentionDays, next.retention);
      if (changes.settings.includes("ingress")) {
        ctx.verificationLimiter = createVerificationFailureLimiter(
          next.ingress.failedVerificationLimit,
          () => clock.now(),
          () => metrics.inc("gateway_webhooks_budget_waits_total"),
        );
      }
      if (changes.lists.upstreams) proxy = createProxy(ctx);
      ctx.enricher = enricherOf(ctx.routes);
      live.reconfigure({ config: next, enricher: ctx.enricher, transformEvent: streamTransformOf(next.destinations) });
      const withSink = new Set(sinks.map((sink) => sink.destinationId));
      const applied = await ctx.delivery?.reload({
        destinations: next.destinations,
        routes: ctx.routes,
        enricher: ctx.enricher,
        sinks: sinks.map((sink) => withTransform(sink, transforms)),
        // A changed destination without a sink now (e.g. it became a stream destination) leaves the engine.
        removed: [...(changes.lists.destinations?.removed ?? []), ...[...touched].filter((id) => !withSink.has(id))],
        saved,
      });
      if (applied) applied.retired.then(disposeTransforms, disposeTransforms);
      else disposeTransforms();
      return { ok: true, changes, kept: applied?.kept ?? {} };
    },
    close: async () => {
      // The engine stops (attempts finish or are aborted) before the stores it writes close.
      await ctx.delivery?.stop();
      transforms.close();
      await options.delivery?.outbox.close();
      // Dead letters collected for a batch are reported before the store closes.
      await operational?.stop();
      live.shutdown();
      await ctx.hub.close();
      ctx.writeHealth?.stop();
      await store.close();
      await ctx.tracing?.shutdown();
    },
  };
}

/** Did the request fail because its client aborted (a body read cut short by the peer)? */
function isClientAbort(error: { cause?: unknown; message?: string }): boolean {
  // Not `request.signal`: on Node, reading it builds an AbortController per answered error.
  const cause = error.cause as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  return (
    cause?.code === "ECONNRESET" ||
    cause?.code === "ERR_STREAM_PREMATURE_CLOSE" ||
    cause?.name === "AbortError" ||
    cause?.message === "aborted"
  );
}

function HTTPErrorIsExpected(error: { data?: unknown }): boolean {
  return typeof (error.data as { code?: unknown } | undefined)?.code === "string";
}

/** A webhook answer as h3 sends it (HTTPResponse: no full Fetch Response where h3 writes directly). */
function toHTTPResponse(answer: WebhookAnswer): HTTPResponse {
  return new HTTPResponse(answer.body, { status: answer.status, headers: answer.headers });
}
