/**
 * The Node runtime entry: builds the gateway around the configured store, serves it with h3's
 * Node server, runs retention maintenance, and shuts down gracefully (stop accepting, finish
 * in-flight requests, flush the store).
 */

import { lookup } from "node:dns/promises";
import type { Server } from "node:http";
import { plugin as ws } from "crossws/server";
import { serve } from "h3";
import type { GatewayConfig } from "../../src/config/schema.ts";
import { createGateway, type Gateway, type GatewayOptions, type ReloadOutcome } from "../../src/create-gateway.ts";
import type { OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { createLogger, type Logger } from "../../src/ops/logger.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { type ResolveHost, warnRefusedDestinations } from "../../src/ssrf/refused-destinations.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import { readStreamOptionsFromEnv, type StreamOptionsInput } from "../../src/stream/stream-options.ts";
import { builtinTransformSource } from "../../src/transform/builtin-transforms.ts";
import { BUILTIN_TRANSFORMS } from "../../src/transform/transform-schema.ts";
import { openConfiguredHub } from "../hub/registry.ts";
import { openConfiguredOutbox } from "../outbox/registry.ts";
import { sendsOffMainThread } from "../sink/http.ts";
import { createConfiguredSinks } from "../sink/registry.ts";
import { openConfiguredStore } from "../store/registry.ts";
import { CliFailure } from "./cli-errors.ts";
import {
  applyConnectionLimits,
  createForwardedClientCap,
  forwardedClientLimit,
  nodeServerOptions,
  trustedClientAddress,
} from "./connection-limits.ts";
import { readDeliveryPollFromEnv } from "./delivery-poll-env.ts";
import { startDeliveryTraceFromEnv } from "./delivery-trace-env.ts";
import { allowListenerPerAttempt } from "./lane-signal.ts";
import { listNodeHeaders } from "./list-node-headers.ts";
import { createNodeCrypto } from "./node-crypto.ts";
import { createNodeEventStreamChannel } from "./node-event-stream-channel.ts";
import { createNodeTracing } from "./node-tracing.ts";
import { createNodeUpstreamFetch } from "./node-upstream-fetch.ts";
import { sendNodeWebSocketText } from "./node-websocket-text.ts";
import { loadQuickJSNode } from "./quickjs-node.ts";
import { nativeNodeRequestBody, readNodeBody } from "./read-node-body.ts";
import { releaseNodeWebSocketUpgrade } from "./release-websocket-upgrade.ts";
import { createStdoutLogWriter } from "./stdout-log-writer.ts";
import { createTransformPool } from "./transform-pool.ts";
import { installWebhookFastPath, readWebhookFastPathSetting, webhookFastPathEnabled } from "./webhook-fast-path.ts";

export interface NodeGatewayOptions {
  config: GatewayConfig;
  /** Overrides `config.server.host`. */
  host?: string;
  /** Overrides `config.server.port`; 0 picks a free port. */
  port?: number;
  logger?: Logger;
  /** Use this store instead of the configured one (tests). */
  store?: StoreDriver;
  /** Use this outbox instead of the one that goes with the configured store (tests). */
  outbox?: OutboxStore;
  /** Live stream tuning; default from the `GATEWAY_STREAM_*` environment variables. */
  stream?: StreamOptionsInput;
  /** Zero-config development mode (dev key offered to the console, test events on). */
  development?: GatewayOptions["development"];
}

export interface RunningGateway {
  url: string;
  gateway: Gateway;
  /**
   * Applies a reloaded, validated configuration (SIGHUP), or refuses it by name when a setting
   * that applies only at start changed; warns about destinations the SSRF guard will refuse.
   */
  reload(next: GatewayConfig): Promise<ReloadOutcome>;
  /** Stops accepting, waits for in-flight requests, flushes and closes the store. */
  stop(): Promise<void>;
}

/** How often retention and compaction run on Node (docs/data-lifecycle.md states it). */
export const MAINTENANCE_INTERVAL_MS = 15 * 60 * 1000;
/** The addresses a destination host resolves to, as the HTTP transport would look them up. */
const resolveHost: ResolveHost = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((found) => found.address);

/** `GATEWAY_LOG_ATTEMPT_INTERVAL_SECONDS`: least seconds between two failed-attempt lines of a destination. */
function attemptWarnIntervalMs(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.GATEWAY_LOG_ATTEMPT_INTERVAL_SECONDS;
  if (raw === undefined || raw === "") return undefined;
  const seconds = Number(raw);
  if (!(Number.isFinite(seconds) && seconds >= 0 && seconds <= 86_400)) {
    throw new Error(`GATEWAY_LOG_ATTEMPT_INTERVAL_SECONDS: expected seconds 0..86400, received ${raw}`);
  }
  return seconds * 1000;
}
const SHUTDOWN_GRACE_MS = 10_000;

/** A bad environment variable stops start-up with its one-line message (no stack trace). */
function asCliFailure<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error));
  }
}

export async function startNodeGateway(options: NodeGatewayOptions): Promise<RunningGateway> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.log.level, createStdoutLogWriter());
  // Read before anything opens, so a bad OTEL_* value stops start-up.
  const tracing = await createNodeTracing(process.env, logger);
  const pollIntervalMs = asCliFailure(() => readDeliveryPollFromEnv(process.env));
  // Per-stage delivery timings, for latency investigations (off unless the variable is set).
  const stopDeliveryTrace = asCliFailure(() => startDeliveryTraceFromEnv(process.env, () => Date.now()));
  const fastPathOn = readWebhookFastPathSetting(process.env);
  // Checked here so that a bad GATEWAY_HTTP_SEND_THREAD stops start-up (each http sink reads it).
  asCliFailure(() => sendsOffMainThread(process.env));
  const store =
    options.store ??
    (await openConfiguredStore(config.store, {
      services: builtinServices,
      logger,
      warn: (message) => logger.warn("durability", { message }),
    }));
  const stream = options.stream ?? readStreamOptionsFromEnv(process.env);
  const outbox = options.outbox ?? (await openConfiguredOutbox(config.store, { logger }));
  const sinks = await createConfiguredSinks(config.destinations, { logger });
  const hub = await openConfiguredHub(config.hub, {
    journal: store,
    store: config.store,
    onError: (error) => logger.error("live hub read failed", { error: String(error) }),
  });
  // Transforms run in worker threads, never on this event loop; started now when a destination
  // has one (a worker takes seconds to load QuickJS), else on the first `/transforms/test`.
  const transformExecutor = createTransformPool({
    size: config.transforms.workers,
    slackMs: config.transforms.deadlineSlackMs,
    heapMb: config.transforms.workerHeapMb,
    warmUpSources: BUILTIN_TRANSFORMS.map((name) => builtinTransformSource(name, builtinServices)),
  });
  if (config.destinations.some((d) => d.transform)) transformExecutor.start();
  const gateway = createGateway({
    config,
    services: builtinServices,
    store,
    hub,
    crypto: createNodeCrypto(),
    readBody: readNodeBody,
    nativeRequestBody: nativeNodeRequestBody,
    createEventStreamChannel: createNodeEventStreamChannel,
    listHeaders: listNodeHeaders,
    upstreamFetch: createNodeUpstreamFetch(),
    loadQuickJS: loadQuickJSNode,
    transformExecutor,
    logger,
    stream,
    // The check phase right after the answer's write: no sleep in epoll and no timer hop between
    // a webhook's 202 and its fan-out (on a busy machine each hop can cost a scheduling slice).
    deferFanOut: (run) => void setImmediate(run),
    sendWebSocketText: sendNodeWebSocketText,
    releaseWebSocketUpgrade: releaseNodeWebSocketUpgrade,
    // A shared outbox (several instances) leases what it hands out for `store.leaseSeconds`.
    delivery: {
      outbox,
      sinks,
      leaseMs: "leaseSeconds" in config.store ? config.store.leaseSeconds * 1000 : undefined,
      pollIntervalMs,
      onLaneSignal: allowListenerPerAttempt,
      // The outcomes of every attempt answered in one turn are written together.
      afterTurn: (run) => setImmediate(run),
    },
    development: options.development,
    tracing,
    deliveryWarnIntervalMs: attemptWarnIntervalMs(process.env),
  });
  await gateway.runMaintenance();
  await gateway.start();
  const maintenance = setInterval(() => {
    gateway.runMaintenance().catch((error) => logger.error("maintenance failed", { error: String(error) }));
  }, MAINTENANCE_INTERVAL_MS);
  maintenance.unref();

  // One client-address policy (resolveClientAddress) and one per-client cap for h3 and the
  // webhook fast path.
  const clientAddress = trustedClientAddress(config.server);
  const perClientCap = createForwardedClientCap(config.server);
  const perClient = perClientCap ? forwardedClientLimit(perClientCap) : undefined;
  const server = serve(gateway.app, {
    hostname: options.host ?? config.server.host,
    port: options.port ?? config.server.port,
    silent: true,
    gracefulShutdown: false,
    // Timeouts, `X-Forwarded-For` trust and connection caps:
    // docs/security-and-deployment.md#what-protects-what.
    trustProxy: config.server.trustProxy,
    node: nodeServerOptions(config.server),
    middleware: [clientAddress, perClient].filter((m) => m !== undefined) as never[],
    plugins: [
      ws({
        options: {
          node: {
            // crossws pings every `idleTimeout` seconds and drops a peer that did not answer the
            // previous ping: a dead subscriber goes within about the stream's idle timeout.
            idleTimeout: gateway.live.options.idleTimeoutMs / 2000,
            serverOptions: { maxPayload: 64 * 1024, perMessageDeflate: false },
          },
        },
      }),
    ],
  });
  const nodeServer = server.node?.server as Server | undefined;
  // Webhooks skip the Fetch Request/Response objects on Node (webhook-fast-path.ts); put in front
  // of srvx's handler while it is the server's only one, before the limits add theirs.
  if (nodeServer && webhookFastPathEnabled(gateway, fastPathOn)) {
    installWebhookFastPath(nodeServer, gateway, logger, config.server, perClientCap);
  }
  if (nodeServer) applyConnectionLimits(nodeServer, config.server, logger);
  await server.ready();
  // Not awaited: host names are looked up in the background, so a slow resolver never delays start.
  const warnRefused = (next: GatewayConfig) =>
    warnRefusedDestinations(next.destinations, logger, resolveHost).catch((error) =>
      logger.warn("checking destination addresses failed", { error: String(error) }),
    );
  void warnRefused(config);
  const address = nodeServer?.address();
  const port = address && typeof address === "object" ? address.port : Number(new URL(server.url ?? "").port);
  const host = options.host ?? config.server.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(maintenance);
      // Live subscribers get a goodbye frame and close code 1001 before the server stops.
      gateway.live.shutdown();
      const closed = server.close();
      nodeServer?.closeIdleConnections();
      // Answers finished during shutdown close their connection, and connections that go idle
      // afterwards are closed at once, so a keep-alive client cannot hold the exit back.
      nodeServer?.on("request", (_req, res) => res.setHeader("connection", "close"));
      const closeIdle = setInterval(() => nodeServer?.closeIdleConnections(), 100);
      const force = setTimeout(() => nodeServer?.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(force);
      clearInterval(closeIdle);
      await gateway.close();
      stopDeliveryTrace?.();
    })();
    return stopping;
  };
  const reload = async (next: GatewayConfig) => {
    const outcome = await gateway.reload(next, (destinations) => createConfiguredSinks(destinations, { logger }));
    if (outcome.ok) void warnRefused(next);
    return outcome;
  };
  return { url, gateway, stop, reload };
}
