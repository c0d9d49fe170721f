/** Dispatches a delivery to the signature scheme of its source's service (src/services/). */

import type { SourceConfig } from "../config/schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import { serviceOfSource } from "../services/lookup-service.ts";
import { builtinServices } from "../services/registry.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { VerifyResult } from "../services/verify-result.ts";

/**
 * Verifies the raw bytes of one delivery against the source's active secrets; `signatureForm` is
 * what the service's `checkSignatureForm` parsed from the same headers, if it ran.
 */
export function verifyWebhook(
  source: SourceConfig,
  headers: HeaderReader,
  rawBody: Uint8Array,
  nowMs: number,
  crypto: CryptoPort,
  services: ServiceRegistry = builtinServices,
  signatureForm?: unknown,
): Promise<VerifyResult> {
  return serviceOfSource(services, source).verifyWebhook({ source, headers, rawBody, nowMs, signatureForm }, crypto);
}
