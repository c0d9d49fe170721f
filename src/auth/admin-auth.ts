/**
 * Admin API authentication: `Authorization: Bearer <key>`, compared by SHA-256 hash against the
 * configured `admin.apiKeyHashes` (keys are never stored in clear).
 */

import type { CryptoPort } from "../crypto/crypto-port.ts";
import { toHex, utf8 } from "../crypto/crypto-port.ts";
import { createGatewayError } from "../errors.ts";

/** What hashing a key needs: the crypto port. */
export interface KeyHashing {
  crypto: CryptoPort;
}

/** What the admin check needs: the crypto port and the configured admin key hashes. */
export interface AdminAuthDeps extends KeyHashing {
  /** Hashes (`sha256:<hex>`) of the admin API keys. */
  adminKeyHashes: ReadonlySet<string>;
}

/** `sha256:<hex>` of an API key, the form stored in config. */
export async function hashApiKey(key: string, ctx: KeyHashing): Promise<string> {
  return `sha256:${toHex(await ctx.crypto.sha256(utf8(key)))}`;
}

/** Throws 401 unless the request carries an admin API key; resolves with the key's hash (`sha256:<hex>`). */
export async function requireAdmin(ctx: AdminAuthDeps, request: Request): Promise<string> {
  const header = request.headers.get("authorization") ?? "";
  // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` is the same as `Bearer`.
  const match = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(header);
  // Hash lookups compare digests of the presented key, so timing reveals nothing about stored keys.
  const hash = match?.[1] ? await hashApiKey(match[1], ctx) : undefined;
  if (!hash || !ctx.adminKeyHashes.has(hash)) {
    throw createGatewayError(401, "unauthorized", "a valid admin API key is required (Authorization: Bearer <key>)", {
      headers: { "www-authenticate": 'Bearer realm="gateway-admin"' },
    });
  }
  return hash;
}
