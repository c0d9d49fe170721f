/**
 * The gateway app's request hooks: every answer carries an `X-Request-Id` (the caller's when
 * well-formed, else a new one), and an error becomes the error envelope, logged once at the
 * level its cause deserves (a client that went away is not an error of ours).
 */
import type { H3Event, HTTPError } from "h3";
import { toErrorResponse } from "./errors.ts";
import type { Logger } from "./ops/logger.ts";

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The request's `X-Request-Id` when well-formed (printable ASCII, at most 128), else a new one. */
export function requestIdOf(request: { headers: { get(name: string): string | null } }): string {
  const given = request.headers.get("x-request-id");
  return given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}

/** The `onRequest` and `onError` hooks of the gateway's app. */
export function createRequestHooks(logger: Logger) {
  return {
    // Every answer carries X-Request-Id; ingress and the proxy set their own (one id per request).
    // A hook rather than middleware: no per-request closures on the ingress hot path.
    onRequest(event: H3Event) {
      const path = event.url.pathname;
      if (path.startsWith("/webhooks/") || path.startsWith("/api/")) return;
      event.res.headers.set("x-request-id", requestIdOf(event.req));
    },
    onError(error: HTTPError, event: H3Event) {
      const response = toErrorResponse(error);
      logAnsweredError(logger, error, response.status, event.url.pathname);
      if (!response.headers.has("x-request-id")) {
        response.headers.set("x-request-id", event.res.headers.get("x-request-id") ?? requestIdOf(event.req));
      }
      return response;
    },
  };
}

/** Logs an answered error once, at the level its cause deserves (the h3 route and the fast path). */
export function logAnsweredError(logger: Logger, error: HTTPError, status: number, path: string): void {
  if (isClientAbort(error)) {
    // The client went away mid-body: nobody is left to answer and nothing is wrong here.
    logger.info("client aborted the request", { path });
  } else if (status >= 500 && !HTTPErrorIsExpected(error)) {
    logger.error("unhandled error", { path, error: String(error.cause ?? error.message) });
  }
}

/** Did the request fail because its client aborted (a body read cut short by the peer)? */
function isClientAbort(error: { cause?: unknown; message?: string }): boolean {
  // Not `request.signal`: on Node, reading it builds an AbortController per answered error.
  const cause = error.cause as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  return (
    cause?.code === "ECONNRESET" ||
    cause?.code === "ERR_STREAM_PREMATURE_CLOSE" ||
    cause?.name === "AbortError" ||
    cause?.message === "aborted"
  );
}

function HTTPErrorIsExpected(error: { data?: unknown }): boolean {
  return typeof (error.data as { code?: unknown } | undefined)?.code === "string";
}
