/**
 * Authenticates a caller of the gateway: an API key (compared by SHA-256 hash against the
 * configured clients) or a JWT verified with jose (HS256 shared secret, or a JWKS URL with
 * issuer and audience). A JWT's `sub` must name a configured client; its other claims can only
 * narrow what that client may do.
 */
import type { createRemoteJWKSet, JWTPayload } from "jose";
import type { AuthConfig, ClientConfig } from "../config/clients-schema.ts";
import { type CryptoPort, toHex, utf8 } from "../crypto/crypto-port.ts";
import { hasAcceptableLifetime } from "./jwt-lifetime.ts";
import { loadJose } from "./load-jose.ts";

export interface ClientPrincipal {
  client: ClientConfig;
  via: "api-key" | "jwt";
  /** Epoch ms at which the credential stops being valid (JWT `exp`). */
  expiresAt?: number;
  /** The verified JWT claims (narrowing claims such as `stream`). */
  claims?: JWTPayload;
}

export type AuthenticateResult =
  | { ok: true; principal: ClientPrincipal }
  | { ok: false; reason: "missing_credentials" | "invalid_credentials" | "expired_credentials" };

/** What a credential is being used for; a JWT minted for one use (`token_use`) is refused for others. */
export type CredentialUse = "proxy" | "stream" | "stream-token" | "events";

export interface ClientAuthenticator {
  /** Authenticates a bearer credential (API key or JWT) for `use`. */
  authenticate(credential: string | undefined, use: CredentialUse): Promise<AuthenticateResult>;
}

/** Accepted API keys remembered (credential -> client) so a key is hashed once, not per call. */
const KNOWN_KEYS_MAX = 1024;

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const CREDENTIAL = /^[\x21-\x7e]{1,4096}$/;

/** Reads `Authorization: Bearer <credential>`, or `?token=` when `allowQuery` (browsers' WebSocket/EventSource). */
export function readBearerCredential(request: Request, url: URL, allowQuery = false): string | undefined {
  const header = request.headers.get("authorization");
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    return match?.[1];
  }
  return allowQuery ? (url.searchParams.get("token") ?? undefined) : undefined;
}

/** Builds the authenticator for the configured clients. */
export function createClientAuthenticator(
  clients: readonly ClientConfig[],
  auth: AuthConfig,
  crypto: CryptoPort,
  now: () => number,
): ClientAuthenticator {
  const byKeyHash = new Map<string, ClientConfig>();
  for (const client of clients) for (const hash of client.apiKeyHashes) byKeyHash.set(hash, client);
  const byId = new Map(clients.map((c) => [c.id, c]));
  // Only keys that matched a client are remembered, and the map is bounded, so unknown
  // credentials cannot grow it; a full map starts over (keys in use come back at once).
  const knownKeys = new Map<string, ClientConfig>();
  const jwt = auth.jwt;
  const hsKey = jwt?.hs256Secret ? utf8(jwt.hs256Secret) : undefined;
  const jwksUrl = jwt?.jwksUrl ? new URL(jwt.jwksUrl) : undefined;
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  const verifyJwt = async (token: string, use: CredentialUse): Promise<AuthenticateResult> => {
    const { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } = await loadJose();
    if (jwksUrl) jwks ??= createRemoteJWKSet(jwksUrl);
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      return { ok: false, reason: "invalid_credentials" };
    }
    const options = { issuer: jwt?.issuer, audience: jwt?.audience, currentDate: new Date(now()) };
    try {
      const { payload } =
        alg === "HS256" && hsKey
          ? await jwtVerify(token, hsKey, { ...options, algorithms: ["HS256"] })
          : jwks && alg !== "HS256" && alg !== "none"
            ? await jwtVerify(token, jwks, options)
            : { payload: undefined };
      const client = payload?.sub ? byId.get(payload.sub) : undefined;
      if (!payload || !client) return { ok: false, reason: "invalid_credentials" };
      if (!hasAcceptableLifetime(payload, Math.floor(now() / 1000), jwt?.maxLifetimeSeconds ?? 86_400)) {
        return { ok: false, reason: "invalid_credentials" };
      }
      // A token minted by the gateway for one use (e.g. a browser's stream token) must not
      // open anything else the client may do with its full credentials.
      if (payload.token_use !== undefined && payload.token_use !== use) {
        return { ok: false, reason: "invalid_credentials" };
      }
      return {
        ok: true,
        principal: { client, via: "jwt", claims: payload, expiresAt: payload.exp ? payload.exp * 1000 : undefined },
      };
    } catch (error) {
      const code = (error as { code?: string }).code;
      return { ok: false, reason: code === "ERR_JWT_EXPIRED" ? "expired_credentials" : "invalid_credentials" };
    }
  };

  return {
    async authenticate(credential, use) {
      if (!credential) return { ok: false, reason: "missing_credentials" };
      if (!CREDENTIAL.test(credential)) return { ok: false, reason: "invalid_credentials" };
      const known = knownKeys.get(credential);
      if (known) return { ok: true, principal: { client: known, via: "api-key" } };
      const client = byKeyHash.get(`sha256:${toHex(await crypto.sha256(utf8(credential)))}`);
      if (client) {
        if (knownKeys.size >= KNOWN_KEYS_MAX) knownKeys.clear();
        knownKeys.set(credential, client);
        return { ok: true, principal: { client, via: "api-key" } };
      }
      if (JWT_SHAPE.test(credential) && jwt) return verifyJwt(credential, use);
      return { ok: false, reason: "invalid_credentials" };
    },
  };
}
