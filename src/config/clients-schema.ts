/**
 * Clients of the gateway (proxy callers, live-stream subscribers, admin tools): who they are
 * (API key hashes, or JWTs whose `sub` names the client) and what they may do (scopes).
 * JWTs authenticate; the configuration authorizes; a token's own claims can only narrow.
 */
import * as v from "valibot";
import { FilterSchema } from "../filters/filter-schema.ts";

const keyHash = v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, "`sha256:` followed by 64 lower-case hex digits"));
const pattern = v.pipe(v.string(), v.minLength(1), v.maxLength(300));
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "*"] as const;

/** One proxy permission: an upstream id (or `*`), methods, and path globs relative to `/api/public/v1`. */
export const ProxyScopeSchema = v.strictObject({
  upstream: pattern,
  /** Default: every method. */
  methods: v.optional(v.array(v.picklist(METHODS)), ["*"]),
  /** Globs: `*` matches one path segment, `**` any number. Default `/**`. */
  paths: v.optional(v.array(pattern), ["/**"]),
});

/** What events a subscriber may receive on `/ws` and `/stream`. Omitted lists mean "all". */
export const StreamScopeSchema = v.strictObject({
  sources: v.optional(v.array(pattern)),
  /** Event-type patterns such as `agreement.*`. */
  types: v.optional(v.array(pattern)),
  /** Subject patterns such as `agreements/*`. */
  subjects: v.optional(v.array(pattern)),
  /** A content filter (docs/filters.md): the subscriber sees only events that also match it. */
  filter: v.optional(FilterSchema),
});

export const ClientSchema = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/, "a client id (letters, digits, _ . : -)")),
  /** Hashes of this client's API keys (`gateway hash-key <key>`). */
  apiKeyHashes: v.optional(v.array(keyHash), []),
  /** Browser origins allowed by CORS for this client. Default none. */
  allowedOrigins: v.optional(
    v.array(v.pipe(v.string(), v.regex(/^https?:\/\/[^/\s]+$/, "an origin such as https://app.example.com"))),
    [],
  ),
  scopes: v.optional(
    v.strictObject({
      /** Proxy calls this client may make. Default none. */
      proxy: v.optional(v.array(ProxyScopeSchema), []),
      /** Live events this client may receive; absent means none. */
      stream: v.optional(StreamScopeSchema),
      /** May read the event log and replay events. Default false. */
      events: v.optional(v.boolean(), false),
    }),
    {},
  ),
});

export const AuthSchema = v.strictObject({
  jwt: v.optional(
    v.strictObject({
      /** Shared secret for HS256 tokens (also signs tokens from POST /auth/stream-token). */
      hs256Secret: v.optional(v.pipe(v.string(), v.minLength(32, "an HS256 secret of at least 32 characters"))),
      /** JWKS endpoint for asymmetric tokens (RS256, ES256, EdDSA). */
      jwksUrl: v.optional(v.pipe(v.string(), v.url())),
      /** Required `iss` claim. */
      issuer: v.optional(v.string()),
      /** Required `aud` claim. */
      audience: v.optional(v.string()),
      /** Longest accepted token lifetime (`exp` is required), seconds. Default 24 h. */
      maxLifetimeSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(60), v.maxValue(31_536_000)), 86_400),
    }),
  ),
});

export type ClientConfig = v.InferOutput<typeof ClientSchema>;
export type ProxyScope = v.InferOutput<typeof ProxyScopeSchema>;
export type StreamScope = v.InferOutput<typeof StreamScopeSchema>;
export type AuthConfig = v.InferOutput<typeof AuthSchema>;
