/**
 * `/api/{upstreamId}/{path}`, any method: answer CORS preflights; authenticate the client (API
 * key or JWT); check its origin and proxy scopes; then pass the call to the upstream with the
 * gateway's credentials and stream the answer back. Upstream answers keep their status, body and
 * headers; failures on the gateway's side answer in the gateway's envelope (502 `upstream_auth_failed`,
 * 502 `upstream_unavailable`, 504 `upstream_timeout`). Every answer carries `X-Request-Id`.
 */

import { FastResponse } from "srvx";
import { readBearerCredential } from "../auth/authenticate-client.ts";
import { createGatewayError, toErrorResponse } from "../errors.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import { answerProxyPreflight, checkRequestOrigin, isPreflight } from "./cors.ts";
import { TokenFetchError } from "./fetch-access-token.ts";
import { buildClientHeaders, buildUpstreamHeaders } from "./forward-headers.ts";
import type { ApiProxy, ProxyDeps, ProxyUpstream } from "./proxy-deps.ts";
import { checkProxyPath, checkProxyQuery, isProxyCallAllowed } from "./proxy-scopes.ts";
import { prepareProxyBody } from "./replayable-body.ts";
import { sendUpstream } from "./send-upstream.ts";
import { passOnBody, UpstreamNetworkError, UpstreamTimeoutError, upstreamHeadersOf } from "./upstream-fetch.ts";
import { startUpstreamSpan } from "./upstream-span.ts";

const AUTH_MESSAGES = {
  missing_credentials: "an API key or token is required (Authorization: Bearer <credential>)",
  invalid_credentials: "the API key or token is not valid",
  expired_credentials: "the token has expired",
} as const;

/** Splits `/api/{id}/{path}` into the upstream id and the raw upstream-relative path. */
function splitProxyPath(pathname: string): { id: string; path: string } {
  const slash = pathname.indexOf("/", 5);
  return slash < 0
    ? { id: pathname.slice(5), path: "/" }
    : { id: pathname.slice(5, slash), path: pathname.slice(slash) };
}

/** Maps a failure of the gateway's own upstream exchange to its envelope error. */
function toGatewayFailure(error: unknown, upstreamId: string) {
  if (error instanceof TokenFetchError) {
    const retryAfter = error.retryAfterMs ? String(Math.ceil(error.retryAfterMs / 1000)) : undefined;
    return createGatewayError(502, "upstream_auth_failed", "the gateway could not authenticate to the upstream", {
      details: { upstream: upstreamId, reason: error.reason, ...(error.status ? { status: error.status } : {}) },
      headers: retryAfter ? { "retry-after": retryAfter } : undefined,
    });
  }
  if (error instanceof UpstreamTimeoutError) {
    return createGatewayError(504, "upstream_timeout", "the upstream did not answer in time", {
      details: { upstream: upstreamId },
    });
  }
  if (error instanceof UpstreamNetworkError) {
    return createGatewayError(502, "upstream_unavailable", "the upstream could not be reached", {
      details: { upstream: upstreamId },
    });
  }
  return error;
}

async function forward(
  ctx: ProxyDeps,
  upstream: ProxyUpstream,
  request: Request,
  url: URL,
  path: string,
  requestId: string,
  extraHeaders: Record<string, string>,
  span: TraceSpan | undefined,
): Promise<Response> {
  const { config } = upstream;
  const credentials = upstream.credentials;
  if (!credentials || !config.baseUrl) {
    throw createGatewayError(503, "upstream_unavailable", `the upstream "${config.id}" is not configured`, {
      details: { upstream: config.id, reason: "not_configured", missing: upstream.missing },
    });
  }
  const started = performance.now();
  const target = `${config.baseUrl}${path}${url.search}`;
  const clientSpan = span && startUpstreamSpan(span, config.id, request.method, target);
  const sent = sendUpstream(
    config,
    credentials,
    {
      method: request.method,
      url: target,
      headers: buildUpstreamHeaders(request.headers, requestId),
      body: await prepareProxyBody(request, config.replayBodyLimitBytes, ctx),
      // No `request.signal`: a caller gone before the answer costs at most the upstream timeout,
      // and a gone reader cancels the streamed answer (which closes the upstream body). Creating
      // the signal per request is a measurable share of the proxy's CPU on Node.
    },
    {
      fetch: ctx.upstreamFetch,
      now: () => ctx.clock.now(),
      onRetry: (reason) => ctx.metrics.inc("gateway_proxy_retries_total", { upstream: config.id, reason }),
      span: clientSpan?.span,
    },
  );
  const response = await (clientSpan ? sent.then(clientSpan.answered, clientSpan.failed) : sent);
  ctx.metrics.observe("gateway_proxy_upstream_seconds", performance.now() - started, { upstream: config.id });
  const bodyless = request.method === "HEAD" || response.status === 204 || response.status === 304;
  // srvx's FastResponse (the runtime's Response off Node) hands the body and the header record to
  // the runtime's server as they are: on Node a whole small answer is written with its head, a
  // streamed one piped as a Node stream (upstream-fetch.ts), and no `Headers` is built.
  return new FastResponse(bodyless ? null : passOnBody(response), {
    status: response.status,
    statusText: response.statusText,
    headers: buildClientHeaders(upstreamHeadersOf(response), requestId, extraHeaders),
  });
}

/** Answers one proxy request; every failure becomes an envelope answer. */
export async function handleProxyRequest(
  ctx: ProxyDeps,
  proxy: ApiProxy,
  upstreamIdParam: string,
  request: Request,
  requestId: string,
  span?: TraceSpan,
): Promise<Response> {
  const url = new URL(request.url);
  const { id, path } = splitProxyPath(url.pathname);
  const upstreamId = id || upstreamIdParam;
  const upstream = proxy.upstreams.get(upstreamId);
  const label = upstream ? upstreamId : "unknown";
  let extraHeaders: Record<string, string> = {};
  let response: Response;
  try {
    if (isPreflight(request)) {
      response = answerProxyPreflight(ctx.config.clients, upstreamId, request);
      response.headers.set("x-request-id", requestId);
    } else {
      const auth = await ctx.clients.authenticate(readBearerCredential(request, url), "proxy");
      if (!auth.ok) {
        throw createGatewayError(401, "unauthorized", AUTH_MESSAGES[auth.reason], {
          headers: { "www-authenticate": 'Bearer realm="gateway"' },
        });
      }
      const { client } = auth.principal;
      extraHeaders = checkRequestOrigin(client, request);
      if (!upstream) throw createGatewayError(404, "not_found", `no upstream "${upstreamId}"`);
      const pathChecked = checkProxyPath(path);
      const checked = pathChecked.ok ? checkProxyQuery(url.search) : pathChecked;
      if (!checked.ok) throw createGatewayError(400, "invalid_request", checked.reason);
      if (!isProxyCallAllowed(client, upstreamId, request.method, path)) {
        throw createGatewayError(403, "forbidden", "this client may not make this call", {
          details: { reason: "scope", upstream: upstreamId, method: request.method },
        });
      }
      response = await forward(ctx, upstream, request, url, path, requestId, extraHeaders, span);
    }
  } catch (error) {
    const failure = toGatewayFailure(error, upstreamId);
    response = toErrorResponse(failure);
    for (const [name, value] of Object.entries(extraHeaders)) response.headers.set(name, value);
    response.headers.set("x-request-id", requestId);
    const status = response.status;
    if (status >= 500) {
      const code = (failure as { data?: { code?: string } }).data?.code;
      ctx.logger.warn("proxy call failed", { requestId, upstream: label, status, code, error: describe(error) });
    }
  }
  ctx.metrics.inc("gateway_proxy_requests_total", { upstream: label, status: String(response.status) });
  ctx.logger.debug("proxied", { requestId, upstream: label, method: request.method, path, status: response.status });
  return response;
}

/** A log-safe description of a failure: class name and reason only, never bodies or tokens. */
function describe(error: unknown): string {
  if (error instanceof TokenFetchError)
    return `${error.name}: ${error.reason}${error.status ? ` ${error.status}` : ""}`;
  if (error instanceof Error) return error.name;
  return typeof error;
}
