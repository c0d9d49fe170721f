/**
 * What the gateway's request handlers share: the validated config, the store driver, the crypto
 * port, metrics, logger and clock. Built once by `createGateway`; runtime adapters supply the
 * parts that differ per runtime. The delivery engine, the proxy and the live stream take the
 * narrow dependencies they use (their `*Deps` types), not this whole context.
 */

import type { ClientAuthenticator } from "./auth/authenticate-client.ts";
import type { GatewayConfig, SourceConfig } from "./config/schema.ts";
import type { CryptoPort } from "./crypto/crypto-port.ts";
import type { DeliveriesErased, DeliveryEngine } from "./delivery/delivery-engine.ts";
import type { Enricher } from "./enrich/create-enricher.ts";
import type { BodyBudget, BodyLease } from "./ingress/body-budget.ts";
import type { RawBodyResult } from "./ingress/read-raw-body.ts";
import type { VerificationFailureLimiter } from "./ingress/verification-failure-limiter.ts";
import type { RetentionPolicy } from "./lifecycle/retention-rules.ts";
import type { Clock } from "./ops/clock.ts";
import type { Logger } from "./ops/logger.ts";
import type { Metrics } from "./ops/metrics.ts";
import type { WriteHealth } from "./ops/write-health.ts";
import type { UpstreamFetch } from "./proxy/upstream-fetch.ts";
import type { CompiledRoute } from "./routes/match-routes.ts";
import type { ServiceRegistry } from "./services/service-contract.ts";
import type { StoreDriver } from "./store/contract.ts";
import type { CreateEventStreamChannel } from "./stream/event-stream-channel.ts";
import type { LiveHub } from "./stream/hub-contract.ts";
import type { Tracing } from "./tracing/tracing-port.ts";
import type { TransformRegistry } from "./transform/transform-registry.ts";

export type { Clock } from "./ops/clock.ts";
export type { UpstreamFetch, UpstreamRequestInit } from "./proxy/upstream-fetch.ts";

export interface GatewayContext {
  config: GatewayConfig;
  sources: ReadonlyMap<string, SourceConfig>;
  /** The upstream services sources and upstreams name (src/services/registry.ts). */
  services: ServiceRegistry;
  store: StoreDriver;
  crypto: CryptoPort;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
  /** `fetch` for the API proxy's upstream calls (runtime adapters may supply a faster one). */
  upstreamFetch: UpstreamFetch;
  /** Reads a request body as exact bytes up to a limit (runtime adapters may supply a faster one). */
  readBody: (request: Request, limit: number, deadlineMs?: number, lease?: BodyLease) => Promise<RawBodyResult>;
  /**
   * Lists a request's headers as lower-cased name -> value, repeated names joined by ", " (what
   * iterating its `Headers` gives); runtime adapters may read them without building a `Headers`.
   */
  listHeaders?: (request: Request) => Record<string, string>;
  /**
   * The request's body in the runtime's own stream form, not yet read, for the proxy to pass a
   * large upload on without Web-stream adaptation (Node: the `IncomingMessage`); undefined when
   * unavailable. The runtime's `upstreamFetch` must accept what this returns as a body.
   */
  nativeRequestBody?: (request: Request) => unknown;
  /** The SSE body channel (default Web streams; the Node adapter pipes a Node stream). */
  createEventStreamChannel?: CreateEventStreamChannel;
  /** The process's budget of webhook body bytes in flight (src/ingress/body-budget.ts). */
  bodyBudget: BodyBudget;
  /** Refuses addresses that keep failing webhook verification (src/ingress/verification-failure-limiter.ts). */
  verificationLimiter?: VerificationFailureLimiter;
  /** Notified after each durable append (delivery engine, live stream). */
  hub: LiveHub;
  /** Authenticates clients (API keys, JWTs). */
  clients: ClientAuthenticator;
  /** The configured routes, compiled. */
  routes: readonly CompiledRoute[];
  /** Attaches upstream resources to delivered events of routes with `enrich` (src/enrich). */
  enricher?: Enricher;
  /** Destinations' transforms (src/transform), when the runtime provides the sandbox. */
  transforms?: TransformRegistry;
  /** The delivery engine (outbox, retries, replay), when the runtime provides transports. */
  delivery?: DeliveryEngine;
  /**
   * Erasure's share of the delivery records and of the watches that quote them (src/lifecycle/
   * erase-events.ts): the local delivery engine and operational events, or on Workers the
   * delivery object's.
   */
  eraseDeliveries?: (eventIds: readonly string[]) => Promise<DeliveriesErased>;
  /** Whether journal and outbox writes currently succeed (`/healthz` "cannot record"). */
  writeHealth?: WriteHealth;
  /** How long each event stays in the log (`retentionDays` and `retention` rules, compiled). */
  retention: RetentionPolicy;
  /** Told each webhook refused with an error code (operational events count verification failures). */
  onWebhookRejected?: (sourceId: string, code: string) => void;
  /** Hashes (`sha256:<hex>`) of the admin API keys. */
  adminKeyHashes: ReadonlySet<string>;
  /** OpenTelemetry tracing (docs/tracing.md), when configured; undefined means off. */
  tracing?: Tracing;
}
