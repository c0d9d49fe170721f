/**
 * The crypto port on `node:crypto`: synchronous HMAC and SHA-256 (no thread-pool hop per
 * request) with `timingSafeEqual` for the constant-time comparison.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { CryptoPort } from "../../src/crypto/crypto-port.ts";

function hmac(secret: string, parts: readonly Uint8Array[]): Buffer {
  const h = createHmac("sha256", secret);
  for (const part of parts) h.update(part);
  return h.digest();
}

export function createNodeCrypto(): CryptoPort {
  return {
    async verifyHmacSha256(secret, parts, mac) {
      if (mac.byteLength !== 32) return false;
      return timingSafeEqual(hmac(secret, parts), mac);
    },
    async signHmacSha256(secret, parts) {
      return new Uint8Array(hmac(secret, parts));
    },
    async sha256(data) {
      return new Uint8Array(createHash("sha256").update(data).digest());
    },
  };
}
