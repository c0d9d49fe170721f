/**
 * OAuth client credentials (esign reference, Authentication and Token): `POST /oauth/access-token`
 * with JSON `client_id`/`client_secret` issues an HS256 JWT (`sub` = client, `scope`, real `exp`
 * on the emulated clock, `jti`), answered with `access_token`, `token_type`, `expires_in`,
 * `expires_at`, `scope`; `DELETE /oauth/access-token` revokes the presented token. Limits: 10/min
 * per IP and 30/min per `client_id` at the token endpoint; 60/min per client on every other call;
 * 429 `rate_limited` with `Retry-After`.
 */
import type { H3Event } from "h3";
import { type JWTPayload, jwtVerify, SignJWT } from "jose";
import * as v from "valibot";
import { createBoundedMap, pushBounded } from "../shared/bounded-map.ts";
import { answer } from "../shared/emulator-frame.ts";
import { EmulatorAnswer, errorAnswer, fail, json, readJsonObject } from "../shared/http-answers.ts";
import { createRateLimit } from "../shared/rate-limit.ts";
import { parseOrFail } from "../shared/validation.ts";
import type { EsignClient, EsignContext } from "./esign-context.ts";

export interface Caller {
  clientId: string;
  scopes: string[];
  token: string;
}

/** Authenticates the caller and checks `scope` when given (webhook endpoints list none). */
export type Guard = (event: H3Event, scope?: string) => Promise<Caller>;

const TokenRequest = v.object({ client_id: v.string(), client_secret: v.string() });

/** Creates the token endpoints and the bearer check every other endpoint uses. */
export function createTokens(ctx: EsignContext, clients: EsignClient[]) {
  const now = () => ctx.scheduler.now();
  const lifetime = ctx.options.tokenLifetimeSeconds ?? 3600;
  const signingKey = crypto.getRandomValues(new Uint8Array(32));
  const perIp = createRateLimit(ctx.options.tokenLimitPerIp ?? 10, 60_000, now);
  const perClient = createRateLimit(ctx.options.tokenLimitPerClient ?? 30, 60_000, now);
  const general = createRateLimit(ctx.options.generalLimitPerClient ?? 60, 60_000, now);
  const issued: string[] = [];
  const revoked = createBoundedMap<string, true>(100_000);
  const verified = createBoundedMap<string, JWTPayload>(10_000);

  const limited = (retryAfterSeconds: number, message: string) =>
    errorAnswer(429, "rate_limited", message, undefined, { "retry-after": String(retryAfterSeconds) });

  const issue = answer(async (event: H3Event) => {
    const ipLimit = perIp.hit(event.req.ip ?? "unknown");
    if (!ipLimit.allowed) return limited(ipLimit.retryAfterSeconds, "too many token requests from this address");
    const body = parseOrFail(TokenRequest, await readJsonObject(event.req), "token request");
    const clientLimit = perClient.hit(body.client_id);
    if (!clientLimit.allowed) return limited(clientLimit.retryAfterSeconds, "too many token requests for this client");
    const client = clients.find((c) => c.clientId === body.client_id && c.clientSecret === body.client_secret);
    if (!client) return errorAnswer(401, "unauthorized", "invalid client credentials");
    const iat = Math.floor(now() / 1000);
    const scope = client.scopes.join(" ");
    const token = await new SignJWT({ scope })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(client.clientId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetime)
      .setJti(crypto.randomUUID())
      .sign(signingKey);
    pushBounded(issued, token, 10_000);
    return json(200, {
      access_token: token,
      token_type: "Bearer",
      expires_in: lifetime,
      expires_at: new Date((iat + lifetime) * 1000).toISOString(),
      scope,
    });
  });

  /** The caller behind the bearer token, or 401 `unauthorized`; then the general rate limit. */
  const authenticate = async (event: H3Event): Promise<Caller> => {
    const token = /^Bearer (\S+)$/.exec(event.req.headers.get("authorization") ?? "")?.[1];
    let claims = token ? verified.get(token) : undefined;
    if (token && !claims) {
      try {
        claims = (await jwtVerify(token, signingKey, { algorithms: ["HS256"], currentDate: new Date(now()) })).payload;
        verified.set(token, claims);
      } catch {
        claims = undefined;
      }
    }
    if (!token || !claims || revoked.has(token) || (claims.exp ?? 0) * 1000 <= now()) {
      await event.req.body?.cancel().catch(() => {});
      fail(401, "unauthorized", "missing, invalid, expired or revoked access token");
    }
    const clientId = String(claims.sub);
    const limit = general.hit(clientId);
    if (!limit.allowed) {
      await event.req.body?.cancel().catch(() => {});
      throw new EmulatorAnswer(limited(limit.retryAfterSeconds, "too many requests"));
    }
    return {
      clientId,
      scopes: String(claims.scope ?? "")
        .split(" ")
        .filter(Boolean),
      token,
    };
  };

  const revoke = answer(async (event) => {
    const caller = await authenticate(event);
    revoked.set(caller.token, true);
    return new Response(null, { status: 204 });
  });

  return {
    issue,
    revoke,
    authenticate,
    /** Every access token issued (bounded), oldest first. */
    issued,
    /** Revokes every token issued so far. */
    revokeAll() {
      for (const token of issued) revoked.set(token, true);
    },
  };
}

/** 403 `forbidden` unless the caller holds `scope`. */
export function requireScope(caller: Caller, scope: string): void {
  if (!caller.scopes.includes(scope)) fail(403, "forbidden", `scope ${scope} required`, { scope });
}

/** Agreement scopes plus client management: what a default emulator client holds. */
export const DEFAULT_SCOPES = [
  "agreements:read",
  "agreements:create",
  "agreements:send",
  "agreements:cancel",
  "clients:manage",
];
