/**
 * The signature header's presence and form, checked from the headers alone before the body is
 * read (docs/security-and-deployment.md#what-protects-what): a delivery that cannot verify
 * whatever its body is answered 401 at
 * once, so a sender without a well-formed signature cannot make the gateway wait for, buffer
 * or hash its body. The service parses its own headers (`checkSignatureForm`), and what it
 * parsed is returned for the verification of the same request (receive-webhook.ts hands it on;
 * no side table keyed by the request), so the header is parsed once. A service without that member is asked through its verifier run with no secret,
 * which stops at `signature_mismatch` exactly when the header is well formed.
 */

import type { SourceConfig } from "../config/schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import { serviceOfSource } from "../services/lookup-service.ts";
import type { ServiceRegistry, SignatureForm } from "../services/service-contract.ts";
import { verifyWebhook } from "./verify-webhook.ts";

const NO_BODY = new Uint8Array(0);
/** The answer for a service without `checkSignatureForm` whose headers may verify (no parsed form). */
const MAY_VERIFY: SignatureForm = { ok: true, form: undefined };

/**
 * The signature headers' form: parsed (handed to the verification of the same request as its
 * `signatureForm`), or the reason they can never verify whatever the body is.
 */
export async function precheckSignature(
  source: SourceConfig,
  headers: HeaderReader,
  nowMs: number,
  crypto: CryptoPort,
  services: ServiceRegistry,
): Promise<SignatureForm> {
  const service = serviceOfSource(services, source);
  if (service.checkSignatureForm) return service.checkSignatureForm(headers);
  const result = await verifyWebhook({ ...source, secrets: [] }, headers, NO_BODY, nowMs, crypto, services);
  if (result.ok || result.reason === "signature_mismatch") return MAY_VERIFY;
  return { ok: false, reason: result.reason };
}
