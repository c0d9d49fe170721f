/**
 * HMAC-SHA256 and SHA-256 with Web Crypto (`crypto.subtle`), hex encoded: what both references
 * sign webhooks with. Runs unchanged on Node, Workers and browsers.
 */

const encoder = new TextEncoder();

/** Hex of bytes. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const byte of view) out += byte.toString(16).padStart(2, "0");
  return out;
}

/** HMAC-SHA256 of `message` with `secret` (UTF-8), hex encoded. */
export async function hmacSha256Hex(secret: string, message: string | Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const data = typeof message === "string" ? encoder.encode(message) : message;
  return toHex(await crypto.subtle.sign("HMAC", key, data as BufferSource));
}

/** SHA-256 of `data`, hex encoded. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return toHex(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
}

/** A random secret: `prefix` + 48 hex digits from the CSPRNG. */
export function randomSecret(prefix: string): string {
  return `${prefix}${toHex(crypto.getRandomValues(new Uint8Array(24)))}`;
}
