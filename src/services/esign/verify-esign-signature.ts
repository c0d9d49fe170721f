/**
 * e-sign webhook signature (README, "Webhook ingress"):
 * `X-Svc-Signature: sha256=<hex>`, HMAC-SHA256 over the raw body with the signing secret.
 * The prefix must stand at the very start; the hex is decoded and compared in constant time
 * against every active secret (rotation).
 */
import { type CryptoPort, decodeHex32 } from "../../crypto/crypto-port.ts";
import { rejectWith, VERIFIED, type VerifyResult } from "../verify-result.ts";

const PREFIX = "sha256=";

export interface EsignVerifyInput {
  /** The `X-Svc-Signature` value as the runtime delivers it (null when absent). */
  signature: string | null;
  rawBody: Uint8Array;
  secrets: readonly string[];
}

/** Verifies one e-sign delivery on the exact bytes received. */
export async function verifyEsignSignature(input: EsignVerifyInput, crypto: CryptoPort): Promise<VerifyResult> {
  const header = input.signature;
  if (header === null || header === "") return rejectWith("missing_signature");
  // Exactly `sha256=` + 64 hex digits: no other algorithm, no leading junk, no list of values
  // (a duplicated header arrives joined with ", " and fails here).
  if (!header.startsWith(PREFIX)) return rejectWith("malformed_signature");
  const mac = decodeHex32(header.slice(PREFIX.length));
  if (!mac) return rejectWith("malformed_signature");
  for (const secret of input.secrets) {
    if (await crypto.verifyHmacSha256(secret, [input.rawBody], mac)) return VERIFIED;
  }
  return rejectWith("signature_mismatch");
}
