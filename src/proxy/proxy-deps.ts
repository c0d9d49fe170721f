/**
 * What the API proxy uses of the gateway (narrow, so the proxy does not depend on the whole
 * gateway context), and the proxy's own shape: one entry per configured upstream.
 */
import type { ClientAuthenticator } from "../auth/authenticate-client.ts";
import type { GatewayConfig } from "../config/schema.ts";
import type { UpstreamConfig } from "../config/upstreams-schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { Clock } from "../ops/clock.ts";
import type { Logger } from "../ops/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { StoreDriver } from "../store/contract.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import type { UpstreamFetch } from "./upstream-fetch.ts";

export interface ProxyDeps {
  config: Pick<GatewayConfig, "upstreams" | "clients">;
  /** Where each upstream's credential kind is found. */
  services: ServiceRegistry;
  clients: ClientAuthenticator;
  /** Holds the cached access tokens. */
  store: StoreDriver;
  crypto: CryptoPort;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  upstreamFetch: UpstreamFetch;
  /** Reads a whole request body up to `limit` bytes (the runtime's fastest way; `GatewayContext.readBody`). */
  readBody?: (request: Request, limit: number) => Promise<{ ok: true; bytes: Uint8Array } | { ok: false }>;
  /** The runtime's own form of an unread request body, for large uploads (`GatewayContext.nativeRequestBody`). */
  nativeRequestBody?: (request: Request) => unknown;
}

export interface UpstreamAuthorization {
  header: string;
  /** The access token used, when it may be refreshed after a 401. */
  token?: string;
}

export interface UpstreamCredentials {
  /**
   * The `Authorization` value for the next call; never `rejected`. A token request it makes is
   * traced as a child of `span` (when tracing is on).
   */
  authorize(rejected?: string, span?: TraceSpan): Promise<UpstreamAuthorization>;
  /** Drops a token the upstream refused (no-op for static keys). */
  invalidate(token: string): Promise<void>;
}

export interface ProxyUpstream {
  config: UpstreamConfig;
  /** Fields still missing; the upstream answers 503 while this is not empty. */
  missing: string[];
  credentials?: UpstreamCredentials;
}

export interface ApiProxy {
  upstreams: ReadonlyMap<string, ProxyUpstream>;
  /** Answers one request to `/api/{upstreamId}/...` (never throws); `span`: its server span, when traced. */
  handle(upstreamId: string, request: Request, requestId: string, span?: TraceSpan): Promise<Response>;
}
