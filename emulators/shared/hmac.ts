/**
 * SHA-256 (hex) and random secrets with Web Crypto, for the emulators' documents, idempotency
 * and credentials. Webhook signatures are the gateway's service modules' (service-signer.ts).
 * Runs unchanged on Node, Workers and browsers.
 */

const encoder = new TextEncoder();

/** Hex of bytes. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const byte of view) out += byte.toString(16).padStart(2, "0");
  return out;
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
