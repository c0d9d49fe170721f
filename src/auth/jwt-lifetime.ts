/**
 * The lifetime rule for client JWTs (docs/security-and-deployment.md#what-protects-what): a token
 * must carry `exp`, and may not be
 * valid for longer than `auth.jwt.maxLifetimeSeconds` (default 24 h), counted from its `iat` when
 * it has one and from now otherwise. A token without `exp` would be accepted forever; a stolen
 * long-lived one could not be contained by rotation short of changing the signing key.
 */
import type { JWTPayload } from "jose";

/** Clock skew tolerated on `iat` in the future, seconds. */
const IAT_SKEW_SECONDS = 60;

/** True when the verified `payload` has an acceptable lifetime at `nowSeconds`. */
export function hasAcceptableLifetime(payload: JWTPayload, nowSeconds: number, maxLifetimeSeconds: number): boolean {
  const { exp, iat } = payload;
  if (typeof exp !== "number" || !Number.isFinite(exp)) return false;
  if (iat !== undefined) {
    if (typeof iat !== "number" || !Number.isFinite(iat) || iat > nowSeconds + IAT_SKEW_SECONDS) return false;
    if (exp - iat > maxLifetimeSeconds) return false;
  }
  return exp - nowSeconds <= maxLifetimeSeconds;
}
