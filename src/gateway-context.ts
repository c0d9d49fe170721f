/**
 * What every handler of the gateway shares: the validated config, the store driver, the crypto
 * port, metrics, logger and clock. Built once by `createGateway`; runtime adapters supply the
 * parts that differ per runtime.
 */
import type { GatewayConfig, SourceConfig } from "./config/schema.ts";
import type { CryptoPort } from "./crypto/crypto-port.ts";
import type { Logger } from "./ops/logger.ts";
import type { Metrics } from "./ops/metrics.ts";
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
  /** Hashes (`sha256:<hex>`) of the admin API keys. */
  adminKeyHashes: ReadonlySet<string>;
}

export const systemClock: Clock = { now: () => Date.now() };
