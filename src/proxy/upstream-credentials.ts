/**
 * How the gateway authenticates to each upstream, by its service's credential kind
 * (src/services/service-contract.ts): `oauth-client-credentials` with a cached access token
 * (refreshable after a 401), `api-key` with the static key. Callers get the
 * `Authorization` value to send; the client's own `Authorization` never goes upstream.
 */

import type { OAuthUpstreamConfig, UpstreamConfig } from "../config/upstreams-schema.ts";
import { toHex, utf8 } from "../crypto/crypto-port.ts";
import type { ProxyCredentialKind } from "../services/service-contract.ts";
import { fetchAccessToken } from "./fetch-access-token.ts";
import type { ProxyDeps, UpstreamCredentials } from "./proxy-deps.ts";
import { createTokenCache, type TokenCache } from "./token-cache.ts";
import { traceTokenFetch } from "./upstream-span.ts";

/** Store key of an upstream's token: per upstream id and account, so a changed client id starts afresh. */
async function tokenKeyOf(ctx: ProxyDeps, upstream: OAuthUpstreamConfig): Promise<string> {
  const account = toHex(await ctx.crypto.sha256(utf8(`${upstream.baseUrl}\n${upstream.clientId}`))).slice(0, 16);
  return `proxy:token:${upstream.id}:${account}`;
}

function createOAuthCredentials(ctx: ProxyDeps, upstream: OAuthUpstreamConfig, tokenPath: string): UpstreamCredentials {
  let cache: Promise<TokenCache> | undefined;
  const cacheOf = () => {
    cache ??= tokenKeyOf(ctx, upstream).then((key) =>
      createTokenCache({
        key,
        store: ctx.store,
        now: () => ctx.clock.now(),
        // Covers one token request; a holder that dies delays the others by at most this long.
        lockTtlMs: Math.min(60_000, upstream.timeoutMs + 5_000),
        fetchToken: (span) =>
          traceTokenFetch(span, upstream.id, `${upstream.baseUrl}${tokenPath}`, ctx.upstreamFetch, (fetcher) =>
            fetchAccessToken(
              upstream,
              tokenPath,
              fetcher,
              () => ctx.clock.now(),
              (outcome) => ctx.metrics.inc("gateway_proxy_token_requests_total", { upstream: upstream.id, outcome }),
            ),
          ),
      }),
    );
    return cache;
  };
  return {
    async authorize(rejected, span) {
      const token = await (await cacheOf()).get(rejected, span);
      return { header: `Bearer ${token}`, token };
    },
    async invalidate(token) {
      await (await cacheOf()).invalidate(token);
    },
  };
}

/** The credentials of a configured upstream (one whose `missingUpstreamFields` is empty). */
export function createUpstreamCredentials(
  ctx: ProxyDeps,
  upstream: UpstreamConfig,
  kind: ProxyCredentialKind,
): UpstreamCredentials {
  if (kind.kind === "oauth-client-credentials") {
    return createOAuthCredentials(ctx, upstream as OAuthUpstreamConfig, kind.tokenPath);
  }
  const header = `Bearer ${(upstream as { apiKey?: string }).apiKey}`;
  return { authorize: async () => ({ header }), invalidate: async () => {} };
}
