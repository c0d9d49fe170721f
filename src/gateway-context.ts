/**
 * What every handler of the gateway shares: the validated config, the store driver, the crypto
 * port, metrics, logger and clock. Built once by `createGateway`; runtime adapters supply the
 * parts that differ per runtime.
 */

import type { ClientAuthenticator } from "./auth/authenticate-client.ts";
import type { GatewayConfig, SourceConfig } from "./config/schema.ts";
import type { CryptoPort } from "./crypto/crypto-port.ts";
import type { DeliveryEngine } from "./delivery/delivery-engine.ts";
import type { Enricher } from "./enrich/create-enricher.ts";
import type { EventHub } from "./events/event-hub.ts";
import type { RawBodyResult } from "./ingress/read-raw-body.ts";
import type { Logger } from "./ops/logger.ts";
import type { Metrics } from "./ops/metrics.ts";
import type { CompiledRoute } from "./routes/match-routes.ts";
import type { StoreDriver } from "./store/contract.ts";

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export interface GatewayContext {
  config: GatewayConfig;
  sources: ReadonlyMap<string, SourceConfig>;
  store: StoreDriver;
  crypto: CryptoPort;
  metrics: Metrics;
  logger: Logger;
  clock: Clock;
  /** `fetch` for the API proxy's upstream calls (runtime adapters may supply a faster one). */
  upstreamFetch: UpstreamFetch;
  /** Reads a request body as exact bytes up to a limit (runtime adapters may supply a faster one). */
  readBody: (request: Request, limit: number) => Promise<RawBodyResult>;
  /** Notified after each durable append (outbox, live stream). */
  hub: EventHub;
  /** Authenticates clients (API keys, JWTs). */
  clients: ClientAuthenticator;
  /** The configured routes, compiled. */
  routes: readonly CompiledRoute[];
  /** Attaches upstream resources to delivered events of routes with `enrich` (src/enrich). */
  enricher?: Enricher;
  /** The delivery engine (outbox, retries, replay), when the runtime provides transports. */
  delivery?: DeliveryEngine;
  /** Hashes (`sha256:<hex>`) of the admin API keys. */
  adminKeyHashes: ReadonlySet<string>;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A proxied call: `fetch`'s init plus the wait allowed for the response headers. */
export interface UpstreamRequestInit extends RequestInit {
  /** `"half"` marks a streamed request body. */
  duplex?: "half";
  /** Milliseconds until the response headers; then reject with `UpstreamTimeoutError`. */
  timeoutMs: number;
}

/**
 * The proxy's HTTP client: `fetch` semantics without following redirects, rejecting with
 * `UpstreamTimeoutError` (src/proxy/upstream-fetch.ts) when the headers are late and with any
 * other error when the upstream cannot be reached.
 */
export type UpstreamFetch = (url: string, init: UpstreamRequestInit) => Promise<Response>;
