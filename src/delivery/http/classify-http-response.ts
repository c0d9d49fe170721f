/**
 * Turns an HTTP destination's answer into an attempt result: 2xx is success; 410 Gone disables
 * the destination; every other status is a retryable failure, waiting at least as long as a
 * `Retry-After` asks. Redirects are answers too (never followed: the target could be anywhere).
 */
import { parseRetryAfter } from "../../http/parse-retry-after.ts";
import type { DeliveryAttemptResult } from "../sink-contract.ts";

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
