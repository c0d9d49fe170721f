/**
 * `Retry-After` (RFC 9110 §10.2.3) as milliseconds from now: delta-seconds or an HTTP date. The
 * one parser of the gateway, used by the proxy (upstream answers, token requests) and by HTTP
 * destinations alike.
 */

/** Milliseconds a `Retry-After` value asks for; undefined when absent or not valid. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  // An HTTP date (IMF-fixdate or the obsolete forms) names a weekday and a time of day;
  // anything else (Date.parse accepts "-5" or "5.5") is not one.
  if (!/^[A-Za-z]{3}/.test(text) || !/\d{2}:\d{2}:\d{2}/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
