/**
 * The gateway's wiring: builds every part from the options, each from what it needs, in the
 * order they depend on each other, and the `GatewayContext` complete in one literal (no field
 * is assigned afterwards).
 *
 * The order: operational events (store, hub, clock) → write health (reports to them) → the
 * proxy (reads the current clients per request) → the enricher (the proxy's upstreams) → the
 * transforms → the delivery engine (enricher, write health, operational events' lane observer)
 * → the context → the live stream. What a reload replaces (the settings, the proxy, the
 * enricher) lives in this function's closure: the context and the proxy read it through, and a
 * reload swaps it in one call (`applySettings`, from src/gateway-lifecycle.ts), never a
 * context field.
 */

import type { GatewayConfig } from "./config/schema.ts";
import { createWebCrypto } from "./crypto/crypto-port.ts";
import {
  combineLaneObservers,
  createDeliveryAlertLog,
  DEFAULT_ATTEMPT_WARN_INTERVAL_SECONDS,
} from "./delivery/delivery-alert-log.ts";
import { createDeliveryEngine, type DeliveryEngine } from "./delivery/delivery-engine.ts";
import { DELIVERY_METRICS } from "./delivery/delivery-metrics.ts";
import { systemScheduler } from "./delivery/scheduler.ts";
import { createEnricher, type Enricher } from "./enrich/create-enricher.ts";
import type { GatewayContext } from "./gateway-context.ts";
import type { GatewayOptions } from "./gateway-options.ts";
import { type GatewaySettings, type SettingsDeps, settingsOf } from "./gateway-settings.ts";
import { createIngressBodyBudget } from "./ingress/ingress-body-budget.ts";
import { readRawBody } from "./ingress/read-raw-body.ts";
import { resumeErasures } from "./lifecycle/erase-events.ts";
import { createOperationalEvents, type OperationalEvents } from "./operational-events/create-operational-events.ts";
import { systemClock } from "./ops/clock.ts";
import { createLogger } from "./ops/logger.ts";
import { createMetrics, GATEWAY_METRICS, type Metrics } from "./ops/metrics.ts";
import { createWriteHealth } from "./ops/write-health.ts";
import { createProxy } from "./proxy/create-proxy.ts";
import type { ApiProxy, ProxyDeps } from "./proxy/proxy-deps.ts";
import { PROXY_METRICS } from "./proxy/proxy-metrics.ts";
import { fetchUpstream } from "./proxy/upstream-fetch.ts";
import type { CompiledRoute } from "./routes/match-routes.ts";
import { builtinServices } from "./services/registry.ts";
import { isolateListeners, withPublishTap } from "./stream/hub-contract.ts";
import { createLiveStream, type LiveStream } from "./stream/live-stream.ts";
import type { StreamDeps } from "./stream/stream-deps.ts";
import { createStreamEventTransform } from "./transform/stream-event-transform.ts";
import { createTransformRegistry, type TransformRegistry } from "./transform/transform-registry.ts";
import { withTransform } from "./transform/transforming-sink.ts";

/** The key and value of the store write that probes a refused journal (16 KiB, about a webhook). */
const WRITE_PROBE_KEY = "gateway:write-probe";
const WRITE_PROBE_VALUE = "x".repeat(16 * 1024);

/** The wired parts of a gateway: its context and what the routes and the lifecycle use besides. */
export interface GatewayParts {
  ctx: GatewayContext;
  live: LiveStream;
  /** The API proxy in force. */
  proxy(): ApiProxy;
  /**
   * Puts a reload's settings in force in one synchronous step: a new proxy when the upstreams
   * changed (else the proxy reads the new clients through), the enricher of the new routes,
   * which it returns.
   */
  applySettings(next: GatewaySettings, upstreamsChanged: boolean): Enricher | undefined;
  /** What settings are built with (`settingsOf`). */
  settingsDeps: SettingsDeps;
  transforms: TransformRegistry;
  operational: OperationalEvents | undefined;
  /** The live stream's transform of stream destinations, when any has one. */
  streamTransformOf(destinations: GatewayConfig["destinations"]): StreamDeps["transformEvent"];
  /** Finishes erasures a stopped gateway left unfinished; logs (never throws) a failure. */
  resumeErasures(): Promise<number>;
}

/** Wires the gateway's parts around the options' store, hub and runtime ports. */
export function buildGatewayContext(options: GatewayOptions): GatewayParts {
  const { config, store } = options;
  const logger = options.logger ?? createLogger(config.log.level);
  const metrics: Metrics = createMetrics({ ...GATEWAY_METRICS, ...PROXY_METRICS, ...DELIVERY_METRICS });
  const crypto = options.crypto ?? createWebCrypto();
  const clock = options.clock ?? systemClock;
  const services = options.services ?? builtinServices;
  const upstreamFetch = options.upstreamFetch ?? fetchUpstream;
  const readBody = options.readBody ?? readRawBody;
  const hub = isolateListeners(options.hub, (error) =>
    logger.error("event subscriber failed", { error: String(error) }),
  );
  const settingsDeps: SettingsDeps = { crypto, clock, metrics };

  const operational = config.operationalEvents.enabled
    ? createOperationalEvents(
        { store, crypto, clock, hub, logger, scheduler: options.delivery?.scheduler ?? systemScheduler },
        config.operationalEvents,
      )
    : undefined;
  const writeHealth = createWriteHealth((failing, what, at) => operational?.onWriteHealth(failing, what, at), {
    // A refused journal append is retried by nobody: a small write of the store's own finds out
    // when it can record again (write-health.ts).
    probes: { journal: () => store.kvSet(WRITE_PROBE_KEY, WRITE_PROBE_VALUE, 60_000) },
  });

  let settings = settingsOf(config, settingsDeps);
  const bodyBudget = createIngressBodyBudget({
    max: () => settings.config.ingress.maxBodyBytesInFlight,
    metrics,
    logger,
    clock,
  });
  const proxyDeps: ProxyDeps = {
    // Read through: a reload's clients reach a proxy it keeps (upstreams unchanged).
    get config() {
      return settings.config;
    },
    get clients() {
      return settings.clients;
    },
    services,
    store,
    crypto,
    clock,
    metrics,
    logger,
    upstreamFetch,
    readBody,
    nativeRequestBody: options.nativeRequestBody,
  };
  const enricherOf = (routes: readonly CompiledRoute[], on: ApiProxy) =>
    routes.some((route) => route.enrich)
      ? createEnricher({
          routes,
          services,
          upstreams: on.upstreams,
          fetch: upstreamFetch,
          now: clock.now,
          logger,
        })
      : undefined;
  let proxy = createProxy(proxyDeps);
  let enricher = enricherOf(settings.routes, proxy);

  const transforms = createTransformRegistry({
    destinations: config.destinations,
    services,
    loadQuickJS: options.loadQuickJS ?? (() => Promise.reject(new Error("this runtime has no transform sandbox"))),
    executor: options.transformExecutor,
  });
  const delivery: DeliveryEngine | undefined =
    options.delivery &&
    createDeliveryEngine(
      {
        destinations: config.destinations,
        routes: settings.routes,
        store,
        hub,
        clock,
        metrics,
        logger,
        writeHealth,
        enricher,
        tracing: options.tracing,
        observeLane: combineLaneObservers(
          operational?.observeLane,
          createDeliveryAlertLog(
            logger,
            () => clock.now(),
            options.deliveryWarnIntervalMs ?? DEFAULT_ATTEMPT_WARN_INTERVAL_SECONDS * 1000,
          ),
        ),
      },
      {
        ...options.delivery,
        sinks: options.delivery.sinks.map((sink) => withTransform(sink, transforms)),
      },
    );
  // What this instance records is routed from its own copy too (a shared outbox: before the
  // hub's read of the log hands it over; delivery-engine.ts `offerLocal`).
  const recordingHub: typeof hub = delivery ? withPublishTap(hub, (record) => delivery.offerLocal(record)) : hub;
  const eraseDeliveries: GatewayContext["eraseDeliveries"] =
    options.eraseDeliveries ??
    (async (eventIds) => {
      const erased = (await delivery?.eraseDeliveries(eventIds)) ?? { cancelled: 0, texts: [] };
      operational?.forgetErased(new Set(eventIds), new Set(erased.texts));
      // Where deliveries run, enrichments are cached (on Workers: the delivery object's isolate).
      if (eventIds.length > 0) enricher?.clear();
      return erased;
    });

  const ctx: GatewayContext = {
    get config() {
      return settings.config;
    },
    get sources() {
      return settings.sources;
    },
    get clients() {
      return settings.clients;
    },
    get routes() {
      return settings.routes;
    },
    get adminKeyHashes() {
      return settings.adminKeyHashes;
    },
    get retention() {
      return settings.retention;
    },
    get verificationLimiter() {
      return settings.verificationLimiter;
    },
    bodyBudget,
    get enricher() {
      return enricher;
    },
    services,
    store,
    crypto,
    readBody,
    listHeaders: options.listHeaders,
    nativeRequestBody: options.nativeRequestBody,
    createEventStreamChannel: options.createEventStreamChannel,
    upstreamFetch,
    metrics,
    logger,
    clock,
    hub: recordingHub,
    writeHealth,
    transforms,
    delivery,
    eraseDeliveries,
    onWebhookRejected: operational && ((sourceId, code) => operational.onWebhookRejected(sourceId, code)),
    tracing: options.tracing,
  };

  const streamTransformOf = (destinations: GatewayConfig["destinations"]) =>
    destinations.some((d) => d.type === "stream" && d.transform)
      ? createStreamEventTransform(transforms, logger, config.transforms.logToProcess)
      : undefined;
  const live = createLiveStream(
    // Config and routes read through, so a reload reaches the fan-out.
    {
      get config() {
        return settings.config;
      },
      get routes() {
        return settings.routes;
      },
      hub,
      store,
      clock,
      logger,
      enricher,
      transformEvent: streamTransformOf(config.destinations),
      tracing: options.tracing,
      deferFanOut: options.deferFanOut,
    },
    options.stream,
  );

  return {
    ctx,
    live,
    proxy: () => proxy,
    applySettings(next, upstreamsChanged) {
      settings = next;
      if (upstreamsChanged) proxy = createProxy(proxyDeps);
      enricher = enricherOf(next.routes, proxy);
      return enricher;
    },
    settingsDeps,
    transforms,
    operational,
    streamTransformOf,
    resumeErasures: () =>
      resumeErasures(ctx).catch((error) => {
        logger.error("finishing an interrupted erasure failed; retried at the next start", { error: String(error) });
        return 0;
      }),
  };
}
