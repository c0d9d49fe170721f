/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded `whsec_` secret,
 * sent as `v1,<base64>`; with several active secrets (rotation) one signature per secret,
 * space-separated, so a receiver holding any of them verifies. Web Crypto only.
 */
import { fromBase64, toBase64 } from "../../_internal/base64.ts";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function keyOf(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    const raw = fromBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret);
    key = crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    keys.set(secret, key);
  }
  return key;
}

/** The `webhook-signature` header value for one message under every secret. */
export async function signStandardWebhook(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: Uint8Array,
): Promise<string> {
  const prefix = encoder.encode(`${msgId}.${timestampSeconds}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix, 0);
  content.set(body, prefix.length);
  const signatures = await Promise.all(
    secrets.map(
      async (secret) =>
        `v1,${toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", await keyOf(secret), content)))}`,
    ),
  );
  return signatures.join(" ");
}
