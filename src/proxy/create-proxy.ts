/**
 * Builds the API proxy of a gateway: one runtime entry per configured upstream with its
 * credentials (token cache or API key). Upstreams whose base URL or credentials are missing stay
 * mounted and answer 503 `upstream_unavailable` (reason `not_configured`), with a warning at
 * start-up, so the zero-config start works before any upstream account exists.
 */
import { missingUpstreamFields } from "../config/upstreams-schema.ts";
import { serviceOfSource } from "../services/lookup-service.ts";
import { handleProxyRequest } from "./handle-proxy-request.ts";
import type { ApiProxy, ProxyDeps, ProxyUpstream } from "./proxy-deps.ts";
import { createUpstreamCredentials } from "./upstream-credentials.ts";

export type { ApiProxy, ProxyUpstream } from "./proxy-deps.ts";

/** Creates the proxy for `ctx.config.upstreams`. */
export function createProxy(ctx: ProxyDeps): ApiProxy {
  const upstreams = new Map<string, ProxyUpstream>();
  for (const config of ctx.config.upstreams) {
    const kind = serviceOfSource(ctx.services, config).proxyCredentials;
    const missing = missingUpstreamFields(config, ctx.services);
    if (missing.length > 0) {
      ctx.logger.warn("upstream not configured; its calls answer 503 until it is", {
        upstream: config.id,
        service: config.service,
        missing,
      });
      upstreams.set(config.id, { config, missing });
    } else {
      upstreams.set(config.id, { config, missing, credentials: createUpstreamCredentials(ctx, config, kind) });
    }
  }
  const proxy: ApiProxy = {
    upstreams,
    handle: (upstreamId, request, requestId, span) =>
      handleProxyRequest(ctx, proxy, upstreamId, request, requestId, span),
  };
  return proxy;
}
