/**
 * e-sign webhook signature (docs/ingress-and-verification.md#post-webhookssourceid):
 * `X-Svc-Signature: sha256=<hex>`, HMAC-SHA256 over the raw body with the signing secret.
 * The prefix must stand at the very start; the hex is decoded and compared in constant time
 * against every active secret (rotation).
 */
import { type CryptoPort, decodeHex32 } from "../../crypto/crypto-port.ts";
import type { SignatureForm } from "../service-contract.ts";
import { rejectWith, VERIFIED, type VerifyFailure, type VerifyResult } from "../verify-result.ts";

const PREFIX = "sha256=";

export interface EsignVerifyInput {
  /** The `X-Svc-Signature` value as the runtime delivers it (null when absent). */
  signature: string | null;
  rawBody: Uint8Array;
  secrets: readonly string[];
  /** The MAC as `checkEsignSignatureForm` decoded it from the same header, when it ran already. */
  mac?: Uint8Array;
}

/** The MAC of the header, or why the header can never verify. */
function parseEsignHeader(header: string | null): Uint8Array | VerifyFailure {
  if (header === null || header === "") return "missing_signature";
  // Exactly `sha256=` + 64 hex digits: no other algorithm, no leading junk, no list of values
  // (a duplicated header arrives joined with ", " and fails here).
  if (!header.startsWith(PREFIX)) return "malformed_signature";
  return decodeHex32(header.slice(PREFIX.length)) ?? "malformed_signature";
}

/** The form check before the body is read: the decoded MAC, or why the header can never verify. */
export function checkEsignSignatureForm(header: string | null): SignatureForm {
  const mac = parseEsignHeader(header);
  return typeof mac === "string" ? { ok: false, reason: mac } : { ok: true, form: mac };
}

/** Verifies one e-sign delivery on the exact bytes received. */
export async function verifyEsignSignature(input: EsignVerifyInput, crypto: CryptoPort): Promise<VerifyResult> {
  const mac = input.mac ?? parseEsignHeader(input.signature);
  if (typeof mac === "string") return rejectWith(mac);
  for (const secret of input.secrets) {
    if (await crypto.verifyHmacSha256(secret, [input.rawBody], mac)) return VERIFIED;
  }
  return rejectWith("signature_mismatch");
}
