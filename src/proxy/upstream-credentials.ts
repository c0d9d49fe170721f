/**
 * How the gateway authenticates to each upstream: the e-sign service with a cached OAuth access
 * token (refreshable after a 401), the staffing service with its static API key. Callers get the
 * `Authorization` value to send; the client's own `Authorization` never goes upstream.
 */

import type { EsignUpstreamConfig, UpstreamConfig } from "../config/upstreams-schema.ts";
import { toHex, utf8 } from "../crypto/crypto-port.ts";
import type { GatewayContext } from "../gateway-context.ts";
import { fetchAccessToken } from "./fetch-access-token.ts";
import { createTokenCache, type TokenCache } from "./token-cache.ts";

export interface UpstreamAuthorization {
  header: string;
  /** The access token used, when it may be refreshed after a 401. */
  token?: string;
}

export interface UpstreamCredentials {
  /** The `Authorization` value for the next call; never `rejected`. */
  authorize(rejected?: string): Promise<UpstreamAuthorization>;
  /** Drops a token the upstream refused (no-op for static keys). */
  invalidate(token: string): Promise<void>;
}

/** Store key of an upstream's token: per upstream id and account, so a changed client id starts afresh. */
async function tokenKeyOf(ctx: GatewayContext, upstream: EsignUpstreamConfig): Promise<string> {
  const account = toHex(await ctx.crypto.sha256(utf8(`${upstream.baseUrl}\n${upstream.clientId}`))).slice(0, 16);
  return `proxy:token:${upstream.id}:${account}`;
}

function createOAuthCredentials(ctx: GatewayContext, upstream: EsignUpstreamConfig): UpstreamCredentials {
  let cache: Promise<TokenCache> | undefined;
  const cacheOf = () => {
    cache ??= tokenKeyOf(ctx, upstream).then((key) =>
      createTokenCache({
        key,
        store: ctx.store,
        now: () => ctx.clock.now(),
        // Covers one token request; a holder that dies delays the others by at most this long.
        lockTtlMs: Math.min(60_000, upstream.timeoutMs + 5_000),
        fetchToken: () =>
          fetchAccessToken(
            upstream,
            ctx.upstreamFetch,
            () => ctx.clock.now(),
            (outcome) => ctx.metrics.inc("gateway_proxy_token_requests_total", { upstream: upstream.id, outcome }),
          ),
      }),
    );
    return cache;
  };
  return {
    async authorize(rejected) {
      const token = await (await cacheOf()).get(rejected);
      return { header: `Bearer ${token}`, token };
    },
    async invalidate(token) {
      await (await cacheOf()).invalidate(token);
    },
  };
}

/** The credentials of a configured upstream (one whose `missingUpstreamFields` is empty). */
export function createUpstreamCredentials(ctx: GatewayContext, upstream: UpstreamConfig): UpstreamCredentials {
  if (upstream.service === "esign") return createOAuthCredentials(ctx, upstream);
  const header = `Bearer ${upstream.apiKey}`;
  return { authorize: async () => ({ header }), invalidate: async () => {} };
}
