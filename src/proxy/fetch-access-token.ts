/**
 * The OAuth 2.0 client-credentials token request of the `oauth-client-credentials` kind
 * (src/services/service-contract.ts): `POST {baseUrl}{tokenPath}` with JSON `client_id` and `client_secret`; the answer is validated with valibot. Retried with
 * p-retry on network errors, 5xx and 429 (honouring `Retry-After` up to the upstream's bound).
 * Failures never carry the token endpoint's body or the secret.
 */

import pRetry from "p-retry";
import * as v from "valibot";
import type { OAuthUpstreamConfig } from "../config/upstreams-schema.ts";
import { parseRetryAfter } from "../http/parse-retry-after.ts";
import type { UpstreamFetch } from "./upstream-fetch.ts";
import {
  callUpstream,
  RetryableStatusError,
  sleep,
  UpstreamNetworkError,
  UpstreamTimeoutError,
} from "./upstream-fetch.ts";

const TokenResponseSchema = v.pipe(
  v.object({
    access_token: v.pipe(v.string(), v.minLength(1), v.maxLength(16_384), v.regex(/^[\x21-\x7e]+$/)),
    token_type: v.pipe(
      v.string(),
      v.check((type) => type.toLowerCase() === "bearer", "token_type Bearer"),
    ),
    expires_in: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    expires_at: v.optional(
      v.pipe(
        v.string(),
        v.check((at) => !Number.isNaN(Date.parse(at)), "a date-time"),
      ),
    ),
    scope: v.optional(v.string()),
  }),
  v.check((token) => token.expires_in !== undefined || token.expires_at !== undefined, "expires_in or expires_at"),
);

/** A token as the gateway keeps it (epoch ms). */
export interface IssuedToken {
  value: string;
  /** When the gateway stops using it: expiry minus min(60 s, 10 % of the lifetime). */
  refreshAt: number;
  expiresAt: number;
}

export type TokenFailureReason = "rejected" | "rate_limited" | "unavailable" | "timeout" | "invalid_response";

/** Why no token could be had; `status` is the token endpoint's status when it answered. */
export class TokenFetchError extends Error {
  override readonly name = "TokenFetchError";
  constructor(
    readonly reason: TokenFailureReason,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(`token request failed: ${reason}${status ? ` (${status})` : ""}`);
  }
}

const MAX_SKEW_MS = 60_000;

/** Turns a validated answer into cache times; `expires_in` wins (immune to clock differences). */
function toIssuedToken(token: v.InferOutput<typeof TokenResponseSchema>, requestedAt: number): IssuedToken {
  const expiresAt =
    token.expires_in !== undefined ? requestedAt + token.expires_in * 1000 : Date.parse(token.expires_at as string);
  const lifetime = expiresAt - requestedAt;
  if (!(lifetime > 0)) throw new TokenFetchError("invalid_response");
  return { value: token.access_token, expiresAt, refreshAt: expiresAt - Math.min(MAX_SKEW_MS, lifetime * 0.1) };
}

async function requestOnce(
  upstream: OAuthUpstreamConfig,
  tokenPath: string,
  fetcher: UpstreamFetch,
  now: () => number,
): Promise<IssuedToken> {
  const requestedAt = now();
  const response = await callUpstream(
    fetcher,
    `${upstream.baseUrl}${tokenPath}`,
    {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ client_id: upstream.clientId, client_secret: upstream.clientSecret }),
    },
    upstream.timeoutMs,
  );
  if (response.status === 429 || response.status >= 500) {
    await response.body?.cancel();
    throw new RetryableStatusError(response.status, parseRetryAfter(response.headers.get("retry-after"), now()));
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new TokenFetchError("rejected", response.status);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new TokenFetchError("invalid_response", response.status);
  }
  const parsed = v.safeParse(TokenResponseSchema, body);
  if (!parsed.success) throw new TokenFetchError("invalid_response", response.status);
  return toIssuedToken(parsed.output, requestedAt);
}

/** Fetches a fresh token; `onAttempt` counts each request sent (metrics). */
export async function fetchAccessToken(
  upstream: OAuthUpstreamConfig,
  tokenPath: string,
  fetcher: UpstreamFetch,
  now: () => number,
  onAttempt: (outcome: "ok" | "failed") => void,
): Promise<IssuedToken> {
  const maxWaitMs = upstream.maxRetryAfterSeconds * 1000;
  try {
    return await pRetry(
      async () => {
        try {
          const token = await requestOnce(upstream, tokenPath, fetcher, now);
          onAttempt("ok");
          return token;
        } catch (error) {
          onAttempt("failed");
          throw error;
        }
      },
      {
        retries: Math.min(upstream.retries, 2),
        minTimeout: upstream.retryDelayMs,
        randomize: true,
        async shouldRetry({ error }) {
          if (error instanceof UpstreamNetworkError) return true;
          if (!(error instanceof RetryableStatusError)) return false;
          if (error.retryAfterMs === undefined) return true;
          // The token endpoint allows 10 requests a minute per IP: wait out its Retry-After, or give up.
          if (error.retryAfterMs > maxWaitMs) return false;
          await sleep(error.retryAfterMs);
          return true;
        },
      },
    );
  } catch (error) {
    if (error instanceof TokenFetchError) throw error;
    if (error instanceof UpstreamTimeoutError) throw new TokenFetchError("timeout");
    if (error instanceof RetryableStatusError) {
      throw error.status === 429
        ? new TokenFetchError("rate_limited", 429, error.retryAfterMs)
        : new TokenFetchError("unavailable", error.status);
    }
    throw new TokenFetchError("unavailable");
  }
}
