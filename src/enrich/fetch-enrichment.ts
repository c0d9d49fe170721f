/**
 * One enrichment fetch: `GET {baseUrl}{path}` through the proxy's credentials for that upstream
 * (the e-sign token cache shared with the proxy, or the staffing API key), bounded as a whole by
 * `timeoutMs` (token, headers and body). A refused cached token is dropped and the call sent once
 * more with a fresh one, as the proxy does (docs/api-proxy.md). It never throws: the result
 * says what went wrong in a short code that is safe to put on an event (no body, no secret).
 */
import { parseBoundedJson } from "../encoding/json-depth.ts";
import { readRawBody } from "../ingress/read-raw-body.ts";
import { TokenFetchError } from "../proxy/fetch-access-token.ts";
import type { ProxyUpstream, UpstreamCredentials } from "../proxy/proxy-deps.ts";
import { type UpstreamFetch, UpstreamTimeoutError } from "../proxy/upstream-fetch.ts";
import { startUpstreamSpan } from "../proxy/upstream-span.ts";
import { setTraceHeaders } from "../tracing/trace-context.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";

/** A resource larger than this is not attached (events travel to mail and queues too). */
export const MAX_ENRICHMENT_BYTES = 256 * 1024;

export type EnrichmentResult = { ok: true; resource: unknown } | { ok: false; error: string };

class DeadlineError extends Error {}

/** Rejects with DeadlineError after `ms`; `clear` disarms it. */
function deadline(ms: number): { promise: Promise<never>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError("enrichment timed out")), ms);
  });
  promise.catch(() => {});
  return { promise, clear: () => clearTimeout(timer) };
}

async function readJson(response: Response): Promise<EnrichmentResult> {
  // Bounded in bytes whether or not the upstream declares a length (a chunked answer too).
  const body = await readRawBody(response, MAX_ENRICHMENT_BYTES);
  if (!body.ok) return { ok: false, error: "too_large" };
  try {
    const resource: unknown = parseBoundedJson(new TextDecoder().decode(body.bytes));
    if (resource === null || typeof resource !== "object") return { ok: false, error: "invalid_body" };
    return { ok: true, resource };
  } catch {
    return { ok: false, error: "invalid_body" };
  }
}

/** GETs `path` of `upstream` within `timeoutMs` (as a client span under `parent`, when traced). */
export async function fetchEnrichment(
  fetcher: UpstreamFetch,
  upstream: ProxyUpstream["config"],
  credentials: UpstreamCredentials,
  path: string,
  timeoutMs: number,
  parent?: TraceSpan,
): Promise<EnrichmentResult> {
  const url = `${upstream.baseUrl}${path}`;
  const traced = parent && startUpstreamSpan(parent, upstream.id, "GET", url);
  const result = await fetchWithin(fetcher, url, credentials, timeoutMs, traced?.span);
  traced?.span.setAttributes({ "gateway.enrichment.outcome": result.ok ? "attached" : result.error });
  traced?.span.end(result.ok ? undefined : result.error);
  return result;
}

async function fetchWithin(
  fetcher: UpstreamFetch,
  url: string,
  credentials: UpstreamCredentials,
  timeoutMs: number,
  span: TraceSpan | undefined,
): Promise<EnrichmentResult> {
  const started = Date.now();
  const exchange = async (rejected?: string) => {
    const auth = await credentials.authorize(rejected, span);
    const left = Math.max(1, timeoutMs - (Date.now() - started));
    const headers: Record<string, string> = { accept: "application/json", authorization: auth.header };
    if (span) setTraceHeaders(headers, span.headers());
    const response = await fetcher(url, { method: "GET", headers, timeoutMs: left });
    span?.setAttributes({ "http.response.status_code": response.status });
    return { response, token: auth.token };
  };
  const work = async (): Promise<EnrichmentResult> => {
    let { response, token } = await exchange();
    if (response.status === 401 && token !== undefined) {
      await response.body?.cancel();
      await credentials.invalidate(token);
      ({ response, token } = await exchange(token));
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      return { ok: false, error: `status_${response.status}` };
    }
    return readJson(response);
  };
  const bound = deadline(timeoutMs);
  try {
    return await Promise.race([work(), bound.promise]);
  } catch (error) {
    if (error instanceof DeadlineError || error instanceof UpstreamTimeoutError) return { ok: false, error: "timeout" };
    // The token endpoint's failures and network errors: no detail travels on the event.
    return { ok: false, error: error instanceof TokenFetchError ? "upstream_auth_failed" : "unreachable" };
  } finally {
    bound.clear();
  }
}
