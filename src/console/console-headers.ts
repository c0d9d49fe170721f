/**
 * Security headers of the web console (docs/console.md): a strict Content-Security-Policy
 * that allows only the console's own hashed script and stylesheet and connections to the
 * gateway's own origin (HTTP and WebSocket), so no request leaves the gateway's origin.
 */

// A Host header is echoed into the policy only when it is a plain host[:port]; anything else
// (a header-injection attempt) leaves the WebSocket sources out and `'self'` alone applies.
const PLAIN_HOST = /^(?:[a-z0-9.-]{1,253}|\[[0-9a-f:.]{2,45}\])(?::\d{1,5})?$/i;

/** The Content-Security-Policy of every console answer, for the request's `Host`. */
function consoleContentSecurityPolicy(host: string | null): string {
  // CSP Level 3 lets 'self' cover ws(s) to the same host; older engines need them named.
  const sockets = host && PLAIN_HOST.test(host) ? ` ws://${host} wss://${host}` : "";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${sockets}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Headers shared by the console's HTML, assets and the dev-key answer. */
export function consoleHeaders(host: string | null, contentType: string, cacheControl: string): Headers {
  return new Headers({
    "content-type": contentType,
    "cache-control": cacheControl,
    "content-security-policy": consoleContentSecurityPolicy(host),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
  });
}
