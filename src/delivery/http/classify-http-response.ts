/**
 * Turns an HTTP destination's answer into an attempt result: 2xx is success; 410 Gone disables
 * the destination; every other status is a retryable failure, waiting at least as long as a
 * `Retry-After` asks. Redirects are answers too (never followed: the target could be anywhere).
 */
import type { DeliveryAttemptResult } from "../sink-contract.ts";

/** Milliseconds a `Retry-After` value asks for (delta-seconds or an HTTP date), if valid. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // An HTTP date (IMF-fixdate or the obsolete forms) names a weekday and a time of day;
  // anything else (Date.parse accepts "-5") is not one.
  if (!/^[A-Za-z]{3}/.test(text) || !/\d{2}:\d{2}:\d{2}/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The result of an attempt that got an answer with `status`. */
export function classifyHttpResponse(
  status: number,
  retryAfter: string | null | undefined,
  nowMs: number,
): DeliveryAttemptResult {
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status === 410) return { ok: false, status, disableDestination: true, error: "HTTP 410 Gone" };
  const result: DeliveryAttemptResult = {
    ok: false,
    status,
    error: status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`,
  };
  const wait = parseRetryAfter(retryAfter, nowMs);
  if (wait !== undefined) result.retryAfterMs = wait;
  return result;
}
