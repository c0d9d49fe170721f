/**
 * Signs an e-sign webhook body exactly as the upstream does: `X-Svc-Signature: sha256=<hex>`,
 * HMAC-SHA256 of the raw body. Used by the samples of `gateway trigger`, `signDelivery` (the
 * upstream emulators) and the benchmarks.
 */
import { type CryptoPort, toHex } from "../../crypto/crypto-port.ts";

/** The `X-Svc-Signature` value of an e-sign delivery. */
export async function signEsignWebhook(crypto: CryptoPort, secret: string, rawBody: Uint8Array): Promise<string> {
  return `sha256=${toHex(await crypto.signHmacSha256(secret, [rawBody]))}`;
}
