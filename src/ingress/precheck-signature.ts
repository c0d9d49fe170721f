/**
 * The signature header's presence and form, checked from the headers alone before the body is
 * read (docs/security-and-deployment.md#what-protects-what): a delivery that cannot verify
 * whatever its body is answered 401 at
 * once, so a sender without a well-formed signature cannot make the gateway wait for, buffer
 * or hash its body. The service parses its own headers (`checkSignatureForm`), and what it
 * parsed is kept for the verification of the same request (`signatureFormOf`), so the header is
 * parsed once. A service without that member is asked through its verifier run with no secret,
 * which stops at `signature_mismatch` exactly when the header is well formed.
 */

import type { SourceConfig } from "../config/schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import { serviceOfSource } from "../services/lookup-service.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import type { VerifyFailure } from "../services/verify-result.ts";
import { verifyWebhook } from "./verify-webhook.ts";

const NO_BODY = new Uint8Array(0);

/** Parsed signature headers by the request headers they came from (gone with the request). */
const checkedForms = new WeakMap<HeaderReader, unknown>();

/** The reason a delivery's headers can never verify, or undefined when the body must be checked. */
export async function precheckSignature(
  source: SourceConfig,
  headers: HeaderReader,
  nowMs: number,
  crypto: CryptoPort,
  services: ServiceRegistry,
): Promise<VerifyFailure | undefined> {
  const service = serviceOfSource(services, source);
  if (service.checkSignatureForm) {
    const checked = service.checkSignatureForm(headers);
    if (!checked.ok) return checked.reason;
    checkedForms.set(headers, checked.form);
    return undefined;
  }
  const result = await verifyWebhook({ ...source, secrets: [] }, headers, NO_BODY, nowMs, crypto, services);
  if (result.ok || result.reason === "signature_mismatch") return undefined;
  return result.reason;
}

/** What `precheckSignature` parsed from these headers, for the service's `verifyWebhook`. */
export function signatureFormOf(headers: HeaderReader): unknown {
  return checkedForms.get(headers);
}
