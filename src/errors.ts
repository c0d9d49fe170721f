/**
 * One HTTP error type for every answer that is not a success: h3's `HTTPError`, carrying a stable
 * machine-readable `code` in `data`, rendered as the documented envelope
 * `{ "error": { "code", "message", "details"? } }`.
 */
import { HTTPError } from "h3";

/** Stable error codes of the gateway's public surface (docs/ingress-and-verification.md, docs/api-proxy.md and the other pages). */
export type ErrorCode =
  | "invalid_signature"
  | "timestamp_out_of_tolerance"
  | "invalid_body"
  | "unknown_source"
  | "payload_too_large"
  | "in_progress"
  | "store_unavailable"
  | "overloaded"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "invalid_request"
  | "upstream_auth_failed"
  | "upstream_unavailable"
  | "upstream_timeout"
  | "request_timeout"
  | "rate_limited"
  | "internal_error";

export interface ErrorData {
  code: ErrorCode;
  details?: unknown;
}

export interface GatewayErrorOptions {
  details?: unknown;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** Creates the gateway's HTTP error; throw it from handlers or return it from pipelines. */
export function createGatewayError(
  status: number,
  code: ErrorCode,
  message: string,
  options: GatewayErrorOptions = {},
): HTTPError<ErrorData> {
  const data: ErrorData = { code };
  if (options.details !== undefined) data.details = options.details;
  return new HTTPError<ErrorData>({
    status,
    message,
    data,
    headers: options.headers,
    cause: options.cause,
  });
}

/** The envelope body of an error. */
export function toErrorBody(code: string, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

/** Renders any thrown value as an envelope `Response`; unknown errors never leak their message. */
export function toErrorResponse(error: unknown): Response {
  const answer = toErrorAnswer(error);
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * The error envelope of `error` as a plain status, lower-cased headers and JSON body (what
 * `toErrorResponse` sends; the Node webhook fast path writes it without a Response object).
 */
export function toErrorAnswer(error: unknown): { status: number; headers: Record<string, string>; body: string } {
  const httpError = HTTPError.isError(error) ? error : undefined;
  const data = httpError?.data as Partial<ErrorData> | undefined;
  let status = httpError?.status ?? 500;
  let code: string = data?.code ?? "";
  let message = httpError?.message ?? "";
  if (!code) {
    // Errors raised by h3 itself (bad URL, 404 route, 405) or by bugs: map to stable codes.
    if (status === 404) code = "not_found";
    else if (status === 405) code = "method_not_allowed";
    else if (status === 413) code = "payload_too_large";
    else if (status >= 400 && status < 500) code = "invalid_request";
    else {
      status = 500;
      code = "internal_error";
      message = "internal error";
    }
  }
  if (!message || httpError?.unhandled) message = status >= 500 ? "internal error" : "request failed";
  const given = new Headers(httpError?.headers);
  given.set("content-type", "application/json; charset=utf-8");
  // In a Headers' order (sorted by name), as a Response built from it sends them.
  const headers: Record<string, string> = {};
  given.forEach((value, name) => {
    headers[name] = value;
  });
  return { status, headers, body: JSON.stringify(toErrorBody(code, message, data?.details)) };
}
