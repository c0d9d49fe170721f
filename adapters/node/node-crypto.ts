/**
 * The crypto port on `node:crypto`: synchronous HMAC and SHA-256 (no thread-pool hop per
 * request) with `timingSafeEqual` for the constant-time comparison. SHA-256 is the one-shot
 * `crypto.hash` (Node >= 20.12, within `engines`): no `Hash` stream object per call, which cost
 * the webhook path 3.8 % of the main thread's busy time (`deriveEventId`, BENCHMARKS.md), and
 * the digest is handed over as a view, not copied.
 */
import { createHmac, createSecretKey, hash, type KeyObject, timingSafeEqual } from "node:crypto";
import type { CryptoPort } from "../../src/crypto/crypto-port.ts";

// Secrets are few and fixed by config: keep their KeyObjects instead of re-encoding per call.
const keys = new Map<string, KeyObject>();

function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret, "utf8"));
    if (keys.size < 1024) keys.set(secret, key);
  }
  return key;
}

function hmac(secret: string, parts: readonly Uint8Array[]): Buffer {
  const h = createHmac("sha256", keyOf(secret));
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
      const digest = hash("sha256", data, "buffer");
      return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
    },
  };
}
