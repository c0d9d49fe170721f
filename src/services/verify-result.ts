/** What a signature check returns: verification never throws for bad input. */

export type VerifyFailure =
  | "missing_signature"
  | "malformed_signature"
  | "signature_mismatch"
  | "timestamp_mismatch"
  | "timestamp_out_of_tolerance";

export type VerifyResult = { ok: true } | { ok: false; reason: VerifyFailure };

export const VERIFIED: VerifyResult = { ok: true };

export function rejectWith(reason: VerifyFailure): VerifyResult {
  return { ok: false, reason };
}
