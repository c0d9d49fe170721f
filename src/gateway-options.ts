/**
 * What `createGateway` takes and what it returns (src/create-gateway.ts): the options a runtime
 * adapter passes (its store, hub, crypto and faster paths), the gateway's surface (`fetch`,
 * lifecycle) and the outcome of a reload.
 */

import type { H3 } from "h3";
import type { ConfigChanges } from "./config/config-changes.ts";
import type { DestinationConfig, GatewayConfig } from "./config/schema.ts";
import type { ConsoleOptions } from "./console/console-routes.ts";
import type { CryptoPort } from "./crypto/crypto-port.ts";
import type { DeliveryEngineOptions } from "./delivery/delivery-engine.ts";
import type { Sink } from "./delivery/sink-contract.ts";
import type { GatewayContext } from "./gateway-context.ts";
import type { WebhookEntry } from "./gateway-webhook-entry.ts";
import type { Clock } from "./ops/clock.ts";
import type { Logger } from "./ops/logger.ts";
import type { UpstreamFetch } from "./proxy/upstream-fetch.ts";
import type { ServiceRegistry } from "./services/service-contract.ts";
import type { StoreDriver } from "./store/contract.ts";
import type { LiveHub } from "./stream/hub-contract.ts";
import type { LiveStream } from "./stream/live-stream.ts";
import type { StreamOptionsInput } from "./stream/stream-options.ts";
import type { CorkPeer, PeerTextSender, ReleaseUpgrade } from "./stream/websocket-transport.ts";
import type { Tracing } from "./tracing/tracing-port.ts";
import type { LoadQuickJS, TransformExecutor } from "./transform/transform-contract.ts";

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
  /**
   * Runs the live fan-out once the webhook's answer is written, in the same event-loop turn where
   * the runtime can (Node adapter: `setImmediate`). Default: `setTimeout(run, 0)`.
   */
  deferFanOut?: (run: () => void) => void;
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
   * Runs transform calls away from the gateway's event loop (adapters/node/transform-pool.ts,
   * adapters/cloudflare/transform-object.ts); the registry closes it. Without it, calls run in
   * this thread on `loadQuickJS`'s module.
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
  receiveWebhook?: WebhookEntry;
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
