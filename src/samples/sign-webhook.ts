/**
 * Signs webhook bodies exactly as the upstreams do (esign: `sha256=<hex>` of the raw body;
 * staffing: `t=<unix>,v1=<hex>` of `<t>.<raw body>`). Used by `gateway trigger`, the tests'
 * upstream fakes and the benchmarks.
 */
import { type CryptoPort, toHex, utf8 } from "../crypto/crypto-port.ts";

/** The `X-Svc-Signature` value of an e-sign delivery. */
export async function signEsignWebhook(crypto: CryptoPort, secret: string, rawBody: Uint8Array): Promise<string> {
  return `sha256=${toHex(await crypto.signHmacSha256(secret, [rawBody]))}`;
}

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
