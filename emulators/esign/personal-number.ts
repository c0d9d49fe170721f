/**
 * `signer_personal_number` (esign reference, Agreement party and its rules): 10 or 12 digits with
 * an optional dash, Luhn-checked over the last ten digits; accepted only when the agreement uses
 * the eid option; kept only as a SHA-256 hash.
 */

import { sha256Hex } from "../shared/hmac.ts";
import { fail } from "../shared/http-answers.ts";

/** True when `value` has the documented form and passes the Luhn check. */
export function isValidPersonalNumber(value: string): boolean {
  const match = /^(\d{6}|\d{8})-?(\d{4})$/.exec(value);
  if (!match) return false;
  const digits = `${match[1]}${match[2]}`.slice(-10);
  let sum = 0;
  for (let i = 0; i < 10; i++) {
    let d = Number(digits[i]) * (i % 2 === 0 ? 2 : 1);
    if (d > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** Hash of a valid personal number, or 400 `invalid_request` (bad form, or no eid option). */
export async function acceptPersonalNumber(
  value: string | undefined,
  agreement: { eid_required: boolean; eid_identify_required: boolean },
): Promise<string | null> {
  if (value === undefined) return null;
  if (!agreement.eid_required && !agreement.eid_identify_required) {
    fail(400, "invalid_request", "signer_personal_number requires eid_required or eid_identify_required");
  }
  if (!isValidPersonalNumber(value)) {
    fail(400, "invalid_request", "signer_personal_number must be 10 or 12 digits and pass the Luhn check");
  }
  return sha256Hex(value.replace("-", "").slice(-10));
}
