/**
 * The proxy's client spans (OpenTelemetry HTTP client conventions): one per proxied call to the
 * upstream (retries and a token refresh included) and one per access-token request, each sending
 * its own context upstream as `traceparent` (docs/tracing.md).
 */

import { errorType } from "../tracing/error-type.ts";
import { setTraceHeaders } from "../tracing/trace-context.ts";
import type { SpanAttributes, TraceSpan } from "../tracing/tracing-port.ts";
import { TokenFetchError } from "./fetch-access-token.ts";
import type { UpstreamFetch } from "./upstream-fetch.ts";

/** `url.full` without the query string (it may carry identifiers that do not belong in traces). */
function clientAttributes(upstreamId: string, method: string, url: string): SpanAttributes {
  const parsed = new URL(url);
  return {
    "http.request.method": method,
    "url.full": `${parsed.origin}${parsed.pathname}`,
    "server.address": parsed.hostname,
    "server.port": Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80)),
    "gateway.upstream.id": upstreamId,
  };
}

export interface UpstreamSpan {
  span: TraceSpan;
  /** Records the upstream's status and ends the span; passes the response on. */
  answered(response: Response): Response;
  /** Ends the span as failed and rethrows. */
  failed(error: unknown): never;
}

/** Starts the client span of one proxied call under `parent` (the request's server span). */
export function startUpstreamSpan(parent: TraceSpan, upstreamId: string, method: string, url: string): UpstreamSpan {
  const span = parent.startChild(method, { kind: "client", attributes: clientAttributes(upstreamId, method, url) });
  return {
    span,
    answered(response) {
      span.setAttributes({ "http.response.status_code": response.status });
      span.end(response.status >= 400 ? String(response.status) : undefined);
      return response;
    },
    failed(error) {
      span.end(errorType(error));
      throw error;
    },
  };
}

/**
 * Runs one access-token request (`fetchToken`, given the fetch to use) in a client span under
 * `parent`; without a parent (tracing off) it runs as it is.
 */
export async function traceTokenFetch<T>(
  parent: TraceSpan | undefined,
  upstreamId: string,
  tokenUrl: string,
  fetcher: UpstreamFetch,
  fetchToken: (fetcher: UpstreamFetch) => Promise<T>,
): Promise<T> {
  if (!parent) return fetchToken(fetcher);
  const span = parent.startChild("fetch access token", {
    kind: "client",
    attributes: clientAttributes(upstreamId, "POST", tokenUrl),
  });
  const traced: UpstreamFetch = (url, init) => {
    const headers = { ...(init.headers as Record<string, string>) };
    setTraceHeaders(headers, span.headers());
    return fetcher(url, { ...init, headers });
  };
  try {
    const token = await fetchToken(traced);
    span.end();
    return token;
  } catch (error) {
    span.end(error instanceof TokenFetchError ? error.reason : errorType(error));
    throw error;
  }
}
