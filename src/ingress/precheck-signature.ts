/**
 * The signature header's presence and form, checked from the headers alone before the body is
 * read (README "Security"): a delivery that cannot verify whatever its body is answered 401 at
 * once, so a sender without a well-formed signature cannot make the gateway wait for, buffer
 * or hash its body. The verifiers themselves decide the form (run with no secret, they stop
 * at `signature_mismatch` exactly when the header is well formed), so the rules stay in one place.
 */
import type { SourceConfig } from "../config/schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { VerifyFailure } from "../services/verify-result.ts";
import { verifyWebhook } from "./verify-webhook.ts";

const NO_BODY = new Uint8Array(0);

/** The reason a delivery's headers can never verify, or undefined when the body must be checked. */
export async function precheckSignature(
  source: SourceConfig,
  headers: Headers,
  nowMs: number,
  crypto: CryptoPort,
  services: ServiceRegistry,
): Promise<VerifyFailure | undefined> {
  const result = await verifyWebhook({ ...source, secrets: [] }, headers, NO_BODY, nowMs, crypto, services);
  if (result.ok || result.reason === "signature_mismatch") return undefined;
  return result.reason;
}
