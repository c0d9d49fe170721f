/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded `whsec_` secret,
 * sent as `v1,<base64>`; with several active secrets (rotation) one signature per secret,
 * space-separated, so a receiver holding any of them verifies. The HMAC is Web Crypto unless
 * the runtime injects a faster one (Node: `node:crypto`, synchronous: then the signature is
 * made without a promise, and the signed content is never copied into one buffer).
 */
import { fromBase64, toBase64 } from "../../encoding/base64.ts";

/**
 * HMAC-SHA256 under raw `key` bytes of `parts` one after the other (strings as UTF-8), in
 * base64. Synchronous when the runtime can (a string), else a promise of it.
 */
export type HmacSha256Base64 = (key: Uint8Array, parts: readonly (string | Uint8Array)[]) => string | Promise<string>;

const encoder = new TextEncoder();
const webKeys = new Map<Uint8Array, Promise<CryptoKey>>();

/** Web Crypto HMAC-SHA256 (imported keys cached per key). */
export const webCryptoHmac: HmacSha256Base64 = async (key, parts) => {
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
  const bytes = parts.map((part) => (typeof part === "string" ? encoder.encode(part) : part));
  const content = new Uint8Array(bytes.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of bytes) {
    content.set(part, offset);
    offset += part.length;
  }
  return toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", await imported, content)));
};

const decoded = new Map<string, Uint8Array>();

/** The key bytes of a `whsec_` secret (decoded once: the same array each time, so ports may cache per key). */
function keyOf(secret: string): Uint8Array {
  let key = decoded.get(secret);
  if (!key) {
    key = fromBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret);
    decoded.set(secret, key);
  }
  return key;
}

const joinSignatures = (macs: readonly string[]) => macs.map((mac) => `v1,${mac}`).join(" ");

/**
 * The `webhook-signature` header value for one message under every secret: a string when the
 * HMAC is synchronous, else a promise of it.
 */
export function signStandardWebhook(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: Uint8Array,
  hmac: HmacSha256Base64 = webCryptoHmac,
): string | Promise<string> {
  const parts = [`${msgId}.${timestampSeconds}.`, body];
  const macs = secrets.map((secret) => hmac(keyOf(secret), parts));
  if (macs.every((mac): mac is string => typeof mac === "string")) return joinSignatures(macs);
  return Promise.all(macs).then(joinSignatures);
}
