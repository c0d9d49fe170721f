/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded `whsec_` secret,
 * sent as `v1,<base64>`; with several active secrets (rotation) one signature per secret,
 * space-separated, so a receiver holding any of them verifies. The HMAC is Web Crypto unless
 * the runtime injects a faster one (Node: `node:crypto`, synchronous).
 */
import { fromBase64, toBase64 } from "../../encoding/base64.ts";

/** HMAC-SHA256 of `data` under raw `key` bytes. */
export type HmacSha256 = (key: Uint8Array, data: Uint8Array) => Uint8Array | Promise<Uint8Array>;

const encoder = new TextEncoder();
const webKeys = new Map<Uint8Array, Promise<CryptoKey>>();

/** Web Crypto HMAC-SHA256 (imported keys cached per key). */
export const webCryptoHmac: HmacSha256 = async (key, data) => {
  let imported = webKeys.get(key);
  if (!imported) {
    imported = crypto.subtle.importKey(
      "raw",
      key as Uint8Array<ArrayBuffer>,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    webKeys.set(key, imported);
  }
  return new Uint8Array(await crypto.subtle.sign("HMAC", await imported, data as Uint8Array<ArrayBuffer>));
};

const decoded = new Map<string, Uint8Array>();

/** The key bytes of a `whsec_` secret (decoded once). */
function keyOf(secret: string): Uint8Array {
  let key = decoded.get(secret);
  if (!key) {
    key = fromBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret);
    decoded.set(secret, key);
  }
  return key;
}

/** The `webhook-signature` header value for one message under every secret. */
export async function signStandardWebhook(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: Uint8Array,
  hmac: HmacSha256 = webCryptoHmac,
): Promise<string> {
  const prefix = encoder.encode(`${msgId}.${timestampSeconds}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix, 0);
  content.set(body, prefix.length);
  const signatures: string[] = [];
  for (const secret of secrets) signatures.push(`v1,${toBase64(await hmac(keyOf(secret), content))}`);
  return signatures.join(" ");
}
