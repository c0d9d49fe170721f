/**
 * What a gateway derives from its configuration and a reload replaces: the sources by id, the
 * client authenticator, the compiled routes and retention, the admin key hashes and the
 * verification-failure limiter. Built by one function at start and on every accepted reload
 * (src/gateway-lifecycle.ts), so the two cannot drift apart; the context reads the current
 * settings through (src/build-gateway-context.ts).
 */
import { type ClientAuthenticator, createClientAuthenticator } from "./auth/authenticate-client.ts";
import type { GatewayConfig, SourceConfig } from "./config/schema.ts";
import type { CryptoPort } from "./crypto/crypto-port.ts";
import {
  createVerificationFailureLimiter,
  type VerificationFailureLimiter,
} from "./ingress/verification-failure-limiter.ts";
import { compileRetention, type RetentionPolicy } from "./lifecycle/retention-rules.ts";
import type { Clock } from "./ops/clock.ts";
import type { Metrics } from "./ops/metrics.ts";
import { type CompiledRoute, compileRoutes } from "./routes/match-routes.ts";

export interface GatewaySettings {
  config: GatewayConfig;
  sources: ReadonlyMap<string, SourceConfig>;
  clients: ClientAuthenticator;
  routes: readonly CompiledRoute[];
  adminKeyHashes: ReadonlySet<string>;
  retention: RetentionPolicy;
  verificationLimiter: VerificationFailureLimiter;
}

/** What building the settings needs besides the configuration. */
export interface SettingsDeps {
  crypto: CryptoPort;
  clock: Clock;
  metrics: Metrics;
}

/**
 * The settings of `config`. `kept` is the limiter of the settings it replaces, kept when the
 * ingress section did not change (its refusals in progress carry over a reload).
 */
export function settingsOf(
  config: GatewayConfig,
  deps: SettingsDeps,
  kept?: VerificationFailureLimiter,
): GatewaySettings {
  const { crypto, clock, metrics } = deps;
  return {
    config,
    sources: new Map(config.sources.map((s) => [s.id, s])),
    clients: createClientAuthenticator(config.clients, config.auth, crypto, () => clock.now()),
    routes: compileRoutes(config.routes),
    adminKeyHashes: new Set(config.admin.apiKeyHashes),
    retention: compileRetention(config.retentionDays, config.retention),
    verificationLimiter:
      kept ??
      createVerificationFailureLimiter(
        config.ingress.failedVerificationLimit,
        () => clock.now(),
        () => metrics.inc("gateway_webhooks_budget_waits_total"),
      ),
  };
}
