/**
 * Signs a staffing webhook body exactly as the upstream does: `X-Svc-Signature: t=<unix>,v1=<hex>`,
 * HMAC-SHA256 of `<t>.<raw body>`. Used by the samples of `gateway trigger`, `signDelivery`
 * (the upstream emulators) and the benchmarks.
 */
import { type CryptoPort, toHex, utf8 } from "../../crypto/crypto-port.ts";

/** The `X-Svc-Signature` value of a staffing delivery signed at `timestamp` (unix seconds). */
export async function signStaffingWebhook(
  crypto: CryptoPort,
  secret: string,
  rawBody: Uint8Array,
  timestamp: number,
): Promise<string> {
  const mac = await crypto.signHmacSha256(secret, [utf8(`${timestamp}.`), rawBody]);
  return `t=${timestamp},v1=${toHex(mac)}`;
}
