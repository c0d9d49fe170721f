/**
 * Upstreams of the API proxy, by id: `/api/{id}/{path}` goes to `{baseUrl}{path}`. Two kinds:
 * `esign` (OAuth 2.0 client credentials, token fetched and cached by the gateway) and `staffing`
 * (a bearer API key). Several accounts of one service may be configured side by side under
 * different ids. Credentials come from the environment (`${VAR}`); an upstream whose base URL or
 * credentials are absent stays mounted but answers 503 until it is configured.
 */
import * as v from "valibot";

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

export const EsignUpstreamSchema = v.strictObject({
  ...common,
  service: v.literal("esign"),
  /** OAuth client id. Absent: the upstream answers 503. */
  clientId: v.optional(credential),
  /** OAuth client secret (from the environment). Absent: the upstream answers 503. */
  clientSecret: v.optional(credential),
});

export const StaffingUpstreamSchema = v.strictObject({
  ...common,
  service: v.literal("staffing"),
  /** The staffing API key (from the environment). Absent: the upstream answers 503. */
  apiKey: v.optional(credential),
});

export const UpstreamSchema = v.variant("service", [EsignUpstreamSchema, StaffingUpstreamSchema]);

export const UpstreamsSchema = v.pipe(
  v.array(UpstreamSchema),
  v.check((upstreams) => new Set(upstreams.map((u) => u.id)).size === upstreams.length, "upstream ids must be unique"),
);

export type UpstreamConfig = v.InferOutput<typeof UpstreamSchema>;
export type EsignUpstreamConfig = v.InferOutput<typeof EsignUpstreamSchema>;
export type StaffingUpstreamConfig = v.InferOutput<typeof StaffingUpstreamSchema>;

/** Names the fields an upstream still needs before it can be called (empty when ready). */
export function missingUpstreamFields(upstream: UpstreamConfig): string[] {
  const wanted: Record<string, unknown> =
    upstream.service === "esign"
      ? { baseUrl: upstream.baseUrl, clientId: upstream.clientId, clientSecret: upstream.clientSecret }
      : { baseUrl: upstream.baseUrl, apiKey: upstream.apiKey };
  return Object.entries(wanted)
    .filter(([, value]) => value === undefined)
    .map(([name]) => name);
}
