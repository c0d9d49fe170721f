/**
 * Configuration of the gateway's defences against hostile traffic
 * (docs/security-and-deployment.md#what-protects-what):
 * connection hygiene of the HTTP server, the per-address limiter of failed webhook
 * verifications, and who may read `/metrics` and the details of `/healthz`.
 * Every field documents its default; docs/configuration.md#fields mirrors this file.
 */
import * as v from "valibot";

const ms = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** An IPv4 or IPv6 address as the runtime reports a peer (no CIDR, no port). */
const address = v.pipe(
  v.string(),
  v.regex(/^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$/, "an IPv4 or IPv6 address"),
);

const keyHash = v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, "`sha256:` followed by 64 lower-case hex digits"));

/**
 * Connection limits, merged into `server` (schema.ts). Applied by the Node adapter
 * (adapters/node/connection-limits.ts); other runtimes have their own front.
 */
export const ServerLimitsEntries = {
  /** Time to receive a request's complete header block, also for a connection that sends nothing. Default 10 s, at most 10 s. */
  headersTimeoutMs: v.optional(ms(100, 10_000), 10_000),
  /** How long an idle keep-alive connection stays open between requests. Default 5 s. */
  keepAliveTimeoutMs: v.optional(ms(100, 120_000), 5_000),
  /** Time to receive a whole request, headers and body (proxied uploads too). Default 300 s. */
  requestTimeoutMs: v.optional(ms(1_000, 3_600_000), 300_000),
  /** Open connections at most; lowered to fit the process's file-descriptor limit. Default 10000. */
  maxConnections: v.optional(ms(1, 1_000_000), 10_000),
  /**
   * Open connections per client address at most; through a trusted proxy, requests in flight per
   * forwarded client address. Default: off while `trustProxy` is off (behind a load balancer one
   * address is every client), 256 once `trustProxy` names the proxies.
   */
  maxConnectionsPerAddress: v.optional(ms(1, 1_000_000)),
  /**
   * Whose `X-Forwarded-For` to believe for the client address: `false` (default: nobody, the
   * peer address counts), `"loopback"`, or a list of proxy addresses.
   */
  trustProxy: v.optional(v.union([v.literal(false), v.literal("loopback"), v.array(address)]), false as const),
};

/**
 * The per-address budget of failed webhook verifications (src/ingress/verification-failure-limiter.ts,
 * docs/behind-a-load-balancer.md). An address over the limit is never refused: its bodies are read
 * `concurrentReads` at a time.
 */
export const FailedVerificationLimitSchema = v.strictObject({
  /** Failed verifications allowed per address within the window before the budget applies; 0 turns it off. Default 20. */
  maxFailures: v.optional(ms(0, 1_000_000), 20),
  /** Window over which failures are counted, seconds. Default 60. */
  windowSeconds: v.optional(ms(1, 86_400), 60),
  /** How long an address that went over the limit stays on the budget, seconds. Default 60. */
  blockSeconds: v.optional(ms(1, 86_400), 60),
  /** Bodies of an address on the budget read and verified at once; the others wait their turn. Default 2. */
  concurrentReads: v.optional(ms(1, 1_000), 2),
  /** Addresses never budgeted (e.g. the upstream's published senders). Default none. */
  allowAddresses: v.optional(v.array(address), []),
});

/** Default budget of webhook body bytes in flight (src/ingress/body-budget.ts): 64 MiB. */
export const DEFAULT_MAX_BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

export const IngressProtectionSchema = v.strictObject({
  failedVerificationLimit: v.optional(FailedVerificationLimitSchema, {}),
  /**
   * Bytes of webhook bodies the process holds at once, received and not yet answered; past it a
   * body is refused with 503 `overloaded` (src/ingress/body-budget.ts). At least every source's
   * `bodyLimitBytes` (checked). Default 64 MiB.
   */
  maxBodyBytesInFlight: v.optional(ms(1024, 64 * 1024 * 1024 * 1024), DEFAULT_MAX_BODY_BYTES_IN_FLIGHT),
});

/** Who may read `/metrics` and the full `/healthz` (docs/security-and-deployment.md#what-protects-what). */
export const MetricsAccessSchema = v.strictObject({
  /** Hashes of bearer tokens that may read them (admin keys always may). Default none. */
  bearerTokenHashes: v.optional(v.array(keyHash), []),
  /** Client addresses that may read them without a token. Default loopback only. */
  allowAddresses: v.optional(v.array(address), ["127.0.0.1", "::1", "::ffff:127.0.0.1"]),
});

export type FailedVerificationLimitConfig = v.InferOutput<typeof FailedVerificationLimitSchema>;
export type IngressProtectionConfig = v.InferOutput<typeof IngressProtectionSchema>;
export type MetricsAccessConfig = v.InferOutput<typeof MetricsAccessSchema>;
