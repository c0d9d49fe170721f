/**
 * Staffing authentication and the headers on every answer (staffing reference, Authentication,
 * Limits and CORS): `Authorization: Bearer <API key>` (sandbox keys `sk_test_…`; a production key
 * `sk_live_…` is refused here, keys are never shared between environments), 60 calls a minute
 * per key with `X-RateLimit-Limit`, `-Remaining`, `-Reset` (unix second) on every answer and 429
 * `rate_limited` with `Retry-After`, `X-Request-Id` echoed (generated when absent), and CORS:
 * preflights answered for any origin unless the key restricts origins.
 */
import type { H3Event } from "h3";
import { errorAnswer } from "../shared/http-answers.ts";
import { createRateLimit } from "../shared/rate-limit.ts";
import type { StaffingContext } from "./staffing-context.ts";

export const SANDBOX_PREFIX = "sk_test_";
export const PRODUCTION_PREFIX = "sk_live_";

const CORS_HEADERS = "Authorization, Content-Type, Idempotency-Key, X-Request-Id";
const CORS_METHODS = "GET, POST, OPTIONS";

/** Installs the middleware; handlers read the caller's key with `apiKeyOf(event)`. */
export function installApiKeys(ctx: StaffingContext, apiKeys: string[]): void {
  const { app, api } = ctx.frame;
  const rate = createRateLimit(ctx.options.limitPerMinute ?? 60, 60_000, () => ctx.scheduler.now());
  const requestIdPattern = /^[\w.:-]{1,128}$/;

  app.use(async (event, next) => {
    const { pathname } = event.url;
    if (pathname !== api && !pathname.startsWith(`${api}/`)) return next();
    const incoming = event.req.headers.get("x-request-id");
    const requestId = incoming && requestIdPattern.test(incoming) ? incoming : crypto.randomUUID();
    const origin = event.req.headers.get("origin");
    const headers = new Headers({ "x-request-id": requestId });
    if (event.req.method === "OPTIONS") {
      headers.set("access-control-allow-origin", origin ?? "*");
      headers.set("access-control-allow-methods", CORS_METHODS);
      headers.set("access-control-allow-headers", CORS_HEADERS);
      headers.set("access-control-max-age", "600");
      headers.set("vary", "Origin");
      return new Response(null, { status: 204, headers });
    }
    const key = /^Bearer (\S+)$/.exec(event.req.headers.get("authorization") ?? "")?.[1];
    const known = key !== undefined && apiKeys.includes(key);
    // Unauthenticated calls count against their address, so a flood of bad keys is limited too.
    const limit = rate.hit(known ? key : `ip:${event.req.ip ?? "unknown"}`);
    headers.set("x-ratelimit-limit", String(limit.limit));
    headers.set("x-ratelimit-remaining", String(limit.remaining));
    headers.set("x-ratelimit-reset", String(Math.ceil(limit.resetAt / 1000)));
    if (origin) {
      const allowed = known ? ctx.options.allowedOrigins?.[key] : undefined;
      if (!allowed || allowed.includes(origin)) {
        headers.set("access-control-allow-origin", origin);
        headers.set("vary", "Origin");
      } else if (known) {
        return decorate(errorAnswer(403, "forbidden", "origin not allowed for this key"), headers);
      }
    }
    const isHealth = pathname === `${api}/healthz`;
    if (!isHealth && !known) {
      await event.req.body?.cancel().catch(() => {});
      const message = key?.startsWith(PRODUCTION_PREFIX)
        ? "a production key cannot be used against the sandbox"
        : "bearer API key missing or invalid";
      return decorate(errorAnswer(401, "unauthorized", message), headers);
    }
    if (!limit.allowed) {
      await event.req.body?.cancel().catch(() => {});
      headers.set("retry-after", String(limit.retryAfterSeconds));
      return decorate(errorAnswer(429, "rate_limited", "too many calls"), headers);
    }
    event.context.apiKey = key;
    return decorate((await next()) as Response, headers);
  });
}

function decorate(response: Response, headers: Headers): Response {
  for (const [name, value] of headers) response.headers.set(name, value);
  return response;
}

/** The authenticated caller's API key. */
export function apiKeyOf(event: H3Event): string {
  return String(event.context.apiKey ?? "");
}
