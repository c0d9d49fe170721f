/**
 * The tiny crypto contract the core needs (the file keeps its older name, "port"): HMAC-SHA256
 * verification in constant time and SHA-256.
 * The default implementation uses Web Crypto (`crypto.subtle`), available on Workers and Node;
 * the Node adapter may inject a faster synchronous one built on `node:crypto`.
 */

import { concatBytes } from "../encoding/concat-bytes.ts";

export interface CryptoPort {
  /**
   * True when `mac` is the HMAC-SHA256 of the concatenation of `parts` under `secret`.
   * Compares in constant time; a `mac` of the wrong length is false.
   */
  verifyHmacSha256(secret: string, parts: readonly Uint8Array[], mac: Uint8Array): Promise<boolean>;
  /** HMAC-SHA256 of the concatenation of `parts` under `secret`. */
  signHmacSha256(secret: string, parts: readonly Uint8Array[]): Promise<Uint8Array>;
  /** SHA-256 digest. */
  sha256(data: Uint8Array): Promise<Uint8Array>;
}

const encoder = new TextEncoder();

/** Web Crypto implementation; imported keys are cached per secret. */
export function createWebCrypto(): CryptoPort {
  const keys = new Map<string, Promise<CryptoKey>>();
  const keyFor = (secret: string): Promise<CryptoKey> => {
    let key = keys.get(secret);
    if (!key) {
      key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
        "sign",
        "verify",
      ]);
      keys.set(secret, key);
    }
    return key;
  };
  return {
    async verifyHmacSha256(secret, parts, mac) {
      if (mac.byteLength !== 32) return false;
      // subtle.verify compares in constant time inside the runtime.
      return crypto.subtle.verify("HMAC", await keyFor(secret), mac as Uint8Array<ArrayBuffer>, concatBytes(parts));
    },
    async signHmacSha256(secret, parts) {
      return new Uint8Array(await crypto.subtle.sign("HMAC", await keyFor(secret), concatBytes(parts)));
    },
    async sha256(data) {
      return new Uint8Array(await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>));
    },
  };
}

/** Lower-case hex of bytes. */
const HEX_BYTES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX_BYTES[bytes[i] as number];
  return out;
}

const HEX_64 = /^[0-9a-fA-F]{64}$/;

/** The value of one hex digit's char code (already checked to be one). */
function hexDigit(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

/**
 * Decodes exactly 64 hex digits to 32 bytes; anything else is undefined. From the char codes:
 * no substring per byte (every webhook's signature passes here).
 */
export function decodeHex32(hex: string): Uint8Array | undefined {
  if (!HEX_64.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = (hexDigit(hex.charCodeAt(2 * i)) << 4) | hexDigit(hex.charCodeAt(2 * i + 1));
  return out;
}

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}
