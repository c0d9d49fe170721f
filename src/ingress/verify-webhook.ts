/** Dispatches a delivery to the signature scheme of its source's service. */
import type { SourceConfig } from "../config/schema.ts";
import type { CryptoPort } from "../crypto/crypto-port.ts";
import { verifyEsignSignature } from "../verify/verify-esign-signature.ts";
import type { VerifyResult } from "../verify/verify-result.ts";
import { verifyStaffingSignature } from "../verify/verify-staffing-signature.ts";

/** Verifies the raw bytes of one delivery against the source's active secrets. */
export function verifyWebhook(
  source: SourceConfig,
  headers: Headers,
  rawBody: Uint8Array,
  nowMs: number,
  crypto: CryptoPort,
): Promise<VerifyResult> {
  const signature = headers.get("x-svc-signature");
  if (source.service === "esign") {
    return verifyEsignSignature({ signature, rawBody, secrets: source.secrets }, crypto);
  }
  return verifyStaffingSignature(
    {
      signature,
      timestamp: headers.get("x-svc-timestamp"),
      rawBody,
      secrets: source.secrets,
      toleranceSeconds: source.toleranceSeconds,
      nowSeconds: Math.floor(nowMs / 1000),
    },
    crypto,
  );
}
