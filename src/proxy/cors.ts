/**
 * CORS for browser callers. Origins are allowed per client (`clients[].allowedOrigins`, default
 * none). A preflight carries no credentials, so it is answered for an origin that at least one
 * client allows, with the methods those clients may use; the real request is then checked
 * against the authenticated client's own origins.
 */
import type { ClientConfig } from "../config/clients-schema.ts";
import { createGatewayError } from "../errors.ts";
import { proxyMethodsOf } from "./proxy-scopes.ts";

/** Request headers a browser may send (the same list the upstreams document). */
export const CORS_ALLOWED_HEADERS = "Authorization, Content-Type, Idempotency-Key, X-Request-Id";
const ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
/** Response headers a browser script may read. */
const EXPOSED_HEADERS =
  "Retry-After, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Idempotent-Replayed";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

/** A CORS preflight: OPTIONS with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(request: Request): boolean {
  return (
    request.method === "OPTIONS" &&
    request.headers.has("origin") &&
    request.headers.has("access-control-request-method")
  );
}

function normalizeOrigin(origin: string): string {
  return origin.toLowerCase();
}

/** True when `client` allows the browser origin. */
export function isOriginAllowed(client: ClientConfig, origin: string): boolean {
  const wanted = normalizeOrigin(origin);
  return client.allowedOrigins.some((allowed) => normalizeOrigin(allowed) === wanted);
}

function denyOrigin(message: string) {
  return createGatewayError(403, "forbidden", message, { details: { reason: "origin_not_allowed" } });
}

/**
 * Answers a preflight for a proxied upstream: 204 with the allowed methods and headers, or 403
 * in the envelope when no client allows the origin or the requested method.
 */
export function answerProxyPreflight(clients: readonly ClientConfig[], upstreamId: string, request: Request): Response {
  const origin = request.headers.get("origin") ?? "";
  const requested = (request.headers.get("access-control-request-method") ?? "").toUpperCase();
  const methods = new Set<string>();
  for (const client of clients) {
    if (!isOriginAllowed(client, origin)) continue;
    for (const method of proxyMethodsOf(client, upstreamId)) methods.add(method);
  }
  const allowed = methods.has("*") ? ALL_METHODS : ALL_METHODS.filter((m) => methods.has(m));
  if (allowed.length === 0) throw denyOrigin("this origin may not call this API from a browser");
  if (!allowed.includes(requested)) {
    throw createGatewayError(403, "forbidden", `the method ${requested || "(none)"} is not allowed from this origin`, {
      details: { reason: "method_not_allowed", allowedMethods: allowed },
    });
  }
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": allowed.join(", "),
      "access-control-allow-headers": CORS_ALLOWED_HEADERS,
      "access-control-max-age": PREFLIGHT_MAX_AGE_SECONDS,
      vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    },
  });
}

/**
 * Checks the `Origin` of an authenticated request. Requests without `Origin` (servers, CLIs)
 * pass; any other needs the client to allow that origin. There is no same-origin exemption: the
 * gateway's own origin would come from the `Host` header, which the caller chooses.
 * Returns the headers to add to the answer.
 */
export function checkRequestOrigin(client: ClientConfig, request: Request): Record<string, string> {
  const origin = request.headers.get("origin");
  if (!origin) return {};
  if (!isOriginAllowed(client, origin)) throw denyOrigin("this client may not be used from this origin");
  return corsResponseHeaders(origin);
}

/** Headers that let the browser read an answer sent to an allowed origin. */
export function corsResponseHeaders(origin: string): Record<string, string> {
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": EXPOSED_HEADERS,
    vary: "Origin",
  };
}
