/**
 * Sends one proxied call upstream: with the upstream's credentials, a per-attempt timeout, a
 * single token refresh and resend after a 401 (when the body can be replayed), and p-retry on
 * network errors, 502/503/504 and 429 (waiting out `Retry-After` up to the upstream's bound),
 * for safe calls only: GET, HEAD, OPTIONS, PUT, DELETE, and POST or PATCH with an
 * `Idempotency-Key`. Anything else is sent exactly once.
 */

import pRetry from "p-retry";
import type { UpstreamConfig } from "../config/upstreams-schema.ts";
import { parseRetryAfter } from "../http/parse-retry-after.ts";
import { setTraceHeaders } from "../tracing/trace-context.ts";
import type { TraceSpan } from "../tracing/tracing-port.ts";
import type { UpstreamCredentials } from "./proxy-deps.ts";
import type { ProxyBody } from "./replayable-body.ts";
import type { UpstreamFetch } from "./upstream-fetch.ts";
import {
  callUpstream,
  RETRYABLE_STATUSES,
  RetryableStatusError,
  sleep,
  UpstreamNetworkError,
} from "./upstream-fetch.ts";

const ALWAYS_SAFE = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
const MAX_BACKOFF_MS = 10_000;

export interface UpstreamCall {
  method: string;
  url: string;
  /** Upstream-bound headers (lower-case names) without `Authorization` (added per attempt). */
  headers: Readonly<Record<string, string>>;
  body: ProxyBody;
}

export interface SendHooks {
  fetch: UpstreamFetch;
  now(): number;
  onRetry(reason: string): void;
  /** The call's client span (tracing on): its context goes upstream as `traceparent`. */
  span?: TraceSpan;
}

/** True when the method (and `Idempotency-Key`) make a resend harmless. */
export function isRetrySafe(method: string, headers: Readonly<Record<string, string>>): boolean {
  return (
    ALWAYS_SAFE.has(method) || ((method === "POST" || method === "PATCH") && headers["idempotency-key"] !== undefined)
  );
}

function bodyInit(body: ProxyBody): { body?: BodyInit; duplex?: "half" } {
  if (body.kind === "buffered") return { body: body.bytes };
  if (body.kind === "stream") return { body: body.stream, duplex: "half" };
  if (body.kind === "native") return { body: body.body as BodyInit, duplex: "half" };
  return {};
}

/** Sends the call and returns the upstream's response (any status); throws on timeout or network failure. */
export async function sendUpstream(
  upstream: UpstreamConfig,
  credentials: UpstreamCredentials,
  call: UpstreamCall,
  hooks: SendHooks,
): Promise<Response> {
  const replayable = call.body.kind === "none" || call.body.kind === "buffered";
  const retries = replayable && isRetrySafe(call.method, call.headers) ? upstream.retries : 0;
  const maxWaitMs = upstream.maxRetryAfterSeconds * 1000;

  const exchange = async (rejected?: string) => {
    const auth = await credentials.authorize(rejected, hooks.span);
    // A plain record (lower-case names): the runtime's fetch takes it without a Headers copy.
    const headers: Record<string, string> = { ...call.headers, authorization: auth.header };
    if (hooks.span) setTraceHeaders(headers, hooks.span.headers());
    // A streamed body keeps its declared length, so the upstream sees no chunked upload.
    if ((call.body.kind === "stream" || call.body.kind === "native") && call.body.length) {
      headers["content-length"] = call.body.length;
    }
    const init = { method: call.method, headers, ...bodyInit(call.body) };
    const response = await callUpstream(hooks.fetch, call.url, init, upstream.timeoutMs);
    return { response, token: auth.token };
  };

  /** One attempt; throws a retryable error only when another attempt is allowed. */
  const attempt = async (attemptNumber: number) => {
    let { response, token } = await exchange();
    if (response.status === 401 && token !== undefined) {
      // The cached token was refused (revoked, or expired early): refresh once, resend once.
      await credentials.invalidate(token);
      if (!replayable) return response;
      await response.body?.cancel();
      hooks.onRetry("token_refresh");
      ({ response } = await exchange(token));
    }
    if (attemptNumber <= retries && RETRYABLE_STATUSES.has(response.status)) {
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), hooks.now());
      // A Retry-After beyond the bound goes back to the client, who can wait it out.
      if (retryAfterMs === undefined || retryAfterMs <= maxWaitMs) {
        await response.body?.cancel();
        throw new RetryableStatusError(response.status, retryAfterMs);
      }
    }
    return response;
  };

  const shouldRetry = async (error: unknown) => {
    if (error instanceof UpstreamNetworkError) {
      hooks.onRetry("network");
      return true;
    }
    if (!(error instanceof RetryableStatusError)) return false;
    hooks.onRetry(String(error.status));
    if (error.retryAfterMs) await sleep(error.retryAfterMs);
    return true;
  };

  // Most calls succeed at once: the first attempt runs outside p-retry, which then runs the rest.
  try {
    return await attempt(1);
  } catch (error) {
    if (retries === 0 || !(await shouldRetry(error))) throw error;
  }
  await sleep(upstream.retryDelayMs * (1 + Math.random()));
  return pRetry((attemptNumber) => attempt(attemptNumber + 1), {
    retries: retries - 1,
    minTimeout: upstream.retryDelayMs * 2,
    maxTimeout: MAX_BACKOFF_MS,
    randomize: true,
    shouldRetry: ({ error }) => shouldRetry(error),
  });
}
