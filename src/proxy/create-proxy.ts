/**
 * Builds the API proxy of a gateway: one runtime entry per configured upstream with its
 * credentials (token cache or API key). Upstreams whose base URL or credentials are missing stay
 * mounted and answer 503 `upstream_unavailable` (reason `not_configured`), with a warning at
 * start-up, so the zero-config start works before any upstream account exists.
 */
import type { HTTPResponse } from "h3";
import { missingUpstreamFields, type UpstreamConfig } from "../config/upstreams-schema.ts";
import type { GatewayContext } from "../gateway-context.ts";
import { handleProxyRequest } from "./handle-proxy-request.ts";
import { createUpstreamCredentials, type UpstreamCredentials } from "./upstream-credentials.ts";

export interface ProxyUpstream {
  config: UpstreamConfig;
  /** Fields still missing; the upstream answers 503 while this is not empty. */
  missing: string[];
  credentials?: UpstreamCredentials;
}

export interface ApiProxy {
  upstreams: ReadonlyMap<string, ProxyUpstream>;
  /** Answers one request to `/api/{upstreamId}/...` (never throws). */
  handle(upstreamId: string, request: Request, requestId: string): Promise<Response | HTTPResponse>;
}

/** Creates the proxy for `ctx.config.upstreams`. */
export function createProxy(ctx: GatewayContext): ApiProxy {
  const upstreams = new Map<string, ProxyUpstream>();
  for (const config of ctx.config.upstreams) {
    const missing = missingUpstreamFields(config);
    if (missing.length > 0) {
      ctx.logger.warn("upstream not configured; its calls answer 503 until it is", {
        upstream: config.id,
        service: config.service,
        missing,
      });
      upstreams.set(config.id, { config, missing });
    } else {
      upstreams.set(config.id, { config, missing, credentials: createUpstreamCredentials(ctx, config) });
    }
  }
  const proxy: ApiProxy = {
    upstreams,
    handle: (upstreamId, request, requestId) => handleProxyRequest(ctx, proxy, upstreamId, request, requestId),
  };
  return proxy;
}
