/**
 * What webhook ingress uses of the gateway (`receiveWebhook`, `guardBeforeBody`): the parts of
 * the gateway context it reads, named here so ingress does not depend on the whole context.
 */
import type { GatewayConfig, SourceConfig } from "../config/schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { Clock } from "../ops/clock.ts";
import type { Logger } from "../ops/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { WriteHealth } from "../ops/write-health.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { EventRecord, StoreDriver } from "../store/contract.ts";
import type { BodyBudget } from "./body-budget.ts";
import type { VerificationFailureLimiter } from "./verification-failure-limiter.ts";

/** What the signature pre-check before the body is read uses. */
export interface IngressGuardDeps {
  clock: Clock;
  crypto: CryptoPort;
  services: ServiceRegistry;
  verificationLimiter?: VerificationFailureLimiter;
}

/** What `receiveWebhook` uses. */
export interface IngressDeps extends IngressGuardDeps {
  config: Pick<GatewayConfig, "claimTtlSeconds">;
  sources: ReadonlyMap<string, SourceConfig>;
  store: StoreDriver;
  metrics: Metrics;
  logger: Logger;
  writeHealth?: WriteHealth;
  /** The process's budget of webhook body bytes in flight; without it only each source's limit applies. */
  bodyBudget?: BodyBudget;
  /** Notified after each durable append (the live hub, src/stream/hub-contract.ts). */
  hub: { publish(record: EventRecord): void };
  /** Told each webhook refused with an error code. */
  onWebhookRejected?: (sourceId: string, code: string) => void;
}
