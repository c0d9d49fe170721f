/**
 * staffing webhook signature (docs/ingress-and-verification.md#post-webhookssourceid):
 * `X-Svc-Signature: t=<unix_seconds>,v1=<hex>`, HMAC-SHA256 of `<t>.<raw body>`.
 * The header must have that form (parts in any order, one `t`, one or more `v1`; other
 * `v<n>=<hex>` schemes are ignored), the timestamp must be within the tolerance of now in both
 * directions, and `X-Svc-Timestamp`, when sent, must equal `t`.
 */
import { type CryptoPort, decodeHex32, utf8 } from "../../crypto/crypto-port.ts";
import type { SignatureForm } from "../service-contract.ts";
import { rejectWith, VERIFIED, type VerifyFailure, type VerifyResult } from "../verify-result.ts";

export interface StaffingVerifyInput {
  signature: string | null;
  /** `X-Svc-Timestamp`, null when absent. */
  timestamp: string | null;
  rawBody: Uint8Array;
  secrets: readonly string[];
  toleranceSeconds: number;
  /** Current time, epoch seconds. */
  nowSeconds: number;
  /** The header as `checkStaffingSignatureForm` parsed it from the same headers, when it ran already. */
  parsed?: ParsedStaffingSignature;
}

export interface ParsedStaffingSignature {
  timestamp: string;
  macs: Uint8Array[];
}

// Unix seconds as the upstream writes them: digits only, no sign, no exponent; at most 12 digits
// keeps the value an exact integer (year 33658) and rejects 20-digit overflow attempts.
const TIMESTAMP = /^[0-9]{1,12}$/;
const OTHER_SCHEME = /^v(?:0|[2-9]|[1-9][0-9]+)=[0-9a-fA-F]+$/;

/** Parses the header strictly; undefined when it does not have the documented form. */
export function parseStaffingSignature(header: string): ParsedStaffingSignature | undefined {
  let timestamp: string | undefined;
  const macs: Uint8Array[] = [];
  const parts = header.split(",");
  if (parts.length > 16) return undefined;
  for (const part of parts) {
    if (part.startsWith("t=")) {
      const value = part.slice(2);
      if (timestamp !== undefined || !TIMESTAMP.test(value)) return undefined;
      timestamp = value;
    } else if (part.startsWith("v1=")) {
      const mac = decodeHex32(part.slice(3));
      if (!mac) return undefined;
      macs.push(mac);
    } else if (!OTHER_SCHEME.test(part)) {
      return undefined;
    }
  }
  if (timestamp === undefined || macs.length === 0) return undefined;
  return { timestamp, macs };
}

/** The parsed headers, or why they can never verify (everything checked before any MAC). */
function parseStaffingHeaders(
  signature: string | null,
  timestamp: string | null,
): ParsedStaffingSignature | VerifyFailure {
  if (signature === null || signature === "") return "missing_signature";
  const parsed = parseStaffingSignature(signature);
  if (!parsed) return "malformed_signature";
  if (timestamp !== null && timestamp !== parsed.timestamp) return "timestamp_mismatch";
  return parsed;
}

/** The form check before the body is read: the parsed header, or why the headers can never verify. */
export function checkStaffingSignatureForm(signature: string | null, timestamp: string | null): SignatureForm {
  const parsed = parseStaffingHeaders(signature, timestamp);
  return typeof parsed === "string" ? { ok: false, reason: parsed } : { ok: true, form: parsed };
}

/** Verifies one staffing delivery on the exact bytes received. */
export async function verifyStaffingSignature(input: StaffingVerifyInput, crypto: CryptoPort): Promise<VerifyResult> {
  const parsed = input.parsed ?? parseStaffingHeaders(input.signature, input.timestamp);
  if (typeof parsed === "string") return rejectWith(parsed);
  const signedPrefix = utf8(`${parsed.timestamp}.`);
  let matched = false;
  for (const secret of input.secrets) {
    for (const mac of parsed.macs) {
      if (await crypto.verifyHmacSha256(secret, [signedPrefix, input.rawBody], mac)) {
        matched = true;
        break;
      }
    }
    if (matched) break;
  }
  if (!matched) return rejectWith("signature_mismatch");
  // Checked after the MAC so this answer only ever describes a genuine but stale delivery,
  // which tells an operator about clock skew rather than about forgeries.
  if (Math.abs(input.nowSeconds - Number(parsed.timestamp)) > input.toleranceSeconds) {
    return rejectWith("timestamp_out_of_tolerance");
  }
  return VERIFIED;
}
