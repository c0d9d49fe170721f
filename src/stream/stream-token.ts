/**
 * `POST /auth/stream-token`: a client authenticated by an API key obtains a short-lived HS256
 * JWT for one browser, restricted to the filters it asks for (which must lie within its own
 * stream scope). The token names the client in `sub`, carries the filters as its `stream` claim
 * and grants nothing else: its `proxy` and `events` claims are empty, so it cannot be replayed
 * against the proxy or the admin API by a component that honours narrowing claims.
 */

import * as v from "valibot";
import { readBearerCredential } from "../auth/authenticate-client.ts";
import { loadJose } from "../auth/load-jose.ts";
import { utf8 } from "../crypto/crypto-port.ts";
import { createGatewayError } from "../errors.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { readRawBody } from "../ingress/read-raw-body.ts";
import type { StreamDeps } from "./stream-deps.ts";
import { StreamFilterSchema } from "./stream-filter.ts";
import type { StreamOptions } from "./stream-options.ts";
import { findScopeViolations, STREAM_CLAIM, streamScopeOf, toStreamClaim } from "./stream-scope.ts";

const BODY_LIMIT = 16 * 1024;

const TokenRequestSchema = v.strictObject({
  ...StreamFilterSchema.entries,
  /** Lifetime in seconds; default and maximum come from the stream options. */
  ttlSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
});

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}

/** Handles `POST /auth/stream-token`; throws the gateway's HTTP errors. */
export async function mintStreamToken(ctx: StreamDeps, request: Request, options: StreamOptions): Promise<Response> {
  const secret = ctx.config.auth.jwt?.hs256Secret;
  if (!secret) {
    throw createGatewayError(
      404,
      "not_found",
      "stream tokens are not enabled (auth.jwt.hs256Secret is not configured)",
    );
  }
  const auth = await ctx.clients.authenticate(readBearerCredential(request, new URL(request.url)), "stream-token");
  if (!auth.ok) {
    throw createGatewayError(401, "unauthorized", "a client API key is required (Authorization: Bearer <key>)", {
      headers: { "www-authenticate": 'Bearer realm="gateway"' },
    });
  }
  const { principal } = auth;
  // Only API-key clients mint: a token must not be able to extend its own lifetime.
  if (principal.via !== "api-key") {
    throw createGatewayError(403, "forbidden", "stream tokens are issued to API-key clients only");
  }
  const scope = streamScopeOf(principal);
  if (!scope.ok) throw createGatewayError(403, "forbidden", scope.message);

  const input = await readJsonBody(ctx.readBody ?? readRawBody, request, { limit: BODY_LIMIT, empty: {} });
  const parsed = v.safeParse(TokenRequestSchema, input);
  if (!parsed.success) {
    throw createGatewayError(400, "invalid_request", "the token request is invalid", {
      details: parsed.issues.map((issue) => ({ path: v.getDotPath(issue), message: issue.message })),
    });
  }
  // A token the gateway would refuse itself is never minted: the client JWT lifetime limit
  // (auth.jwt.maxLifetimeSeconds, docs/security-and-deployment.md#what-protects-what) caps the
  // stream token's too.
  const maxTtl = Math.min(
    options.maxTokenTtlSeconds,
    ctx.config.auth.jwt?.maxLifetimeSeconds ?? Number.POSITIVE_INFINITY,
  );
  const { ttlSeconds = Math.min(options.tokenTtlSeconds, maxTtl), ...filter } = parsed.output;
  if (ttlSeconds > maxTtl) {
    throw createGatewayError(400, "invalid_request", `ttlSeconds may be at most ${maxTtl}`);
  }
  const violations = findScopeViolations(scope.layers, filter);
  if (violations.length > 0) {
    throw createGatewayError(403, "forbidden", "the requested filters are outside this client's stream scope", {
      details: { outsideScope: violations },
    });
  }

  const issuedAt = Math.floor(ctx.clock.now() / 1000);
  const jwtConfig = ctx.config.auth.jwt;
  const { SignJWT } = await loadJose();
  let builder = new SignJWT({ [STREAM_CLAIM]: toStreamClaim(filter), proxy: [], events: false, token_use: "stream" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(principal.client.id)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .setJti(crypto.randomUUID());
  if (jwtConfig?.issuer) builder = builder.setIssuer(jwtConfig.issuer);
  if (jwtConfig?.audience) builder = builder.setAudience(jwtConfig.audience);
  const token = await builder.sign(utf8(secret));
  ctx.logger.info("stream token issued", { client: principal.client.id, ttlSeconds });
  return json(201, {
    token,
    tokenType: "Bearer",
    expiresIn: ttlSeconds,
    expiresAt: new Date((issuedAt + ttlSeconds) * 1000).toISOString(),
    stream: toStreamClaim(filter),
  });
}
