/**
 * Upstreams of the API proxy, by id: `/api/{id}/{path}` goes to `{baseUrl}{path}`. `service`
 * names a registered service (src/services/registry.ts), whose credential kind decides the
 * credential fields: `oauth-client-credentials` (`clientId`, `clientSecret`; a token fetched
 * and cached by the gateway) or `api-key` (`apiKey`, sent as a bearer token). Several accounts of one service may be configured side by side under
 * different ids. Credentials come from the environment (`${VAR}`); an upstream whose base URL or
 * credentials are absent stays mounted but answers 503 until it is configured.
 */
import * as v from "valibot";
import { builtinServices } from "../services/registry.ts";
import type { ProxyCredentialKind, ServiceRegistry, UpstreamService } from "../services/service-contract.ts";

const id = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "an id of lower-case letters, digits, _ or - (max 63)"),
);

/** The API root the proxied path is appended to, ending in `/api/public/v1` (no trailing slash). */
const baseUrl = v.pipe(
  v.string(),
  v.url("an absolute http(s) URL such as https://api.example.com/api/public/v1"),
  v.regex(/^https?:\/\/[^?#]*[^/?#]$/, "an http(s) URL without a trailing slash, query or fragment"),
);

const credential = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));

const common = {
  id,
  /** API root; `{path}` of `/api/{id}/{path}` is appended. Absent: the upstream answers 503. */
  baseUrl: v.optional(baseUrl),
  /** Milliseconds to wait for the upstream's response headers, per attempt. Default 30000. */
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(50), v.maxValue(600_000)), 30_000),
  /** Retries of a retryable call (network error, 502/503/504, 429). Default 2. */
  retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)), 2),
  /** First backoff between retries in ms, doubled per retry. Default 200. */
  retryDelayMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(60_000)), 200),
  /** Longest `Retry-After` (seconds) the gateway waits out before retrying; longer ones are passed back. Default 10. */
  maxRetryAfterSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(600)), 10),
  /** Request bodies up to this size (bytes) are buffered so they can be replayed (401 refresh, retries); larger ones stream once. Default 1 MiB. */
  replayBodyLimitBytes: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(32 * 1024 * 1024)),
    1024 * 1024,
  ),
};

/** Credential fields of the `oauth-client-credentials` kind. */
const oauthFields = {
  /** OAuth client id. Absent: the upstream answers 503. */
  clientId: v.optional(credential),
  /** OAuth client secret (from the environment). Absent: the upstream answers 503. */
  clientSecret: v.optional(credential),
};

/** Credential fields of the `api-key` kind. */
const apiKeyFields = {
  /** The service's API key (from the environment). Absent: the upstream answers 503. */
  apiKey: v.optional(credential),
};

/** The fields an upstream of each credential kind needs before it can be called. */
export const REQUIRED_CREDENTIAL_FIELDS: Readonly<Record<ProxyCredentialKind["kind"], readonly string[]>> = {
  "oauth-client-credentials": ["clientId", "clientSecret"],
  "api-key": ["apiKey"],
};

function oauthUpstreamSchema(name: string) {
  return v.strictObject({ ...common, service: v.literal(name), ...oauthFields });
}

function apiKeyUpstreamSchema(name: string) {
  return v.strictObject({ ...common, service: v.literal(name), ...apiKeyFields });
}

type UpstreamVariant = ReturnType<typeof oauthUpstreamSchema> | ReturnType<typeof apiKeyUpstreamSchema>;

/** One upstream's schema, by its service's credential kind. */
function upstreamSchemaOf(service: UpstreamService): UpstreamVariant {
  return service.proxyCredentials.kind === "oauth-client-credentials"
    ? oauthUpstreamSchema(service.name)
    : apiKeyUpstreamSchema(service.name);
}

/** The `upstreams` list's schema for a registry of services; ids are unique. */
export function createUpstreamsSchema(services: ServiceRegistry) {
  const variants = [...services.values()].map(upstreamSchemaOf) as [UpstreamVariant, ...UpstreamVariant[]];
  return v.pipe(
    v.array(v.variant("service", variants)),
    v.check(
      (upstreams) => new Set(upstreams.map((u) => u.id)).size === upstreams.length,
      "upstream ids must be unique",
    ),
  );
}

export const UpstreamsSchema = createUpstreamsSchema(builtinServices);

export type UpstreamConfig = v.InferOutput<UpstreamVariant>;
/** An upstream whose service authenticates with OAuth client credentials. */
export type OAuthUpstreamConfig = v.InferOutput<ReturnType<typeof oauthUpstreamSchema>>;

/** Names the fields an upstream still needs before it can be called (empty when ready). */
export function missingUpstreamFields(upstream: UpstreamConfig, services: ServiceRegistry = builtinServices): string[] {
  const kind = services.get(upstream.service)?.proxyCredentials.kind ?? "api-key";
  const values = upstream as Record<string, unknown>;
  return ["baseUrl", ...REQUIRED_CREDENTIAL_FIELDS[kind]].filter((name) => values[name] === undefined);
}
