/**
 * The gateway's configuration on Workers, built from the Worker's bindings
 * (docs/cloudflare-workers.md):
 * - `GATEWAY_CONFIG` (optional var): the config as JSON (destinations, routes, clients,
 *   upstreams, ...), `${VAR}` references resolved from the bindings (secrets), exactly as the Node
 *   config file. Without `sources` in it: the `esign` and `staffing` sources below.
 * - Secrets per source, several at once for key rotation: `ESIGN_WEBHOOK_SECRETS` (comma
 *   separated) and/or `ESIGN_WEBHOOK_SECRET`; likewise `STAFFING_...`. Any active one verifies.
 * The store section is not read on Workers: the store is always the Durable Object one.
 */
import { ConfigError, resolveConfig } from "../../src/config/resolve-config.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";

/** The bindings this Worker reads as strings (vars or secrets). */
export interface WorkerVars {
  ESIGN_WEBHOOK_SECRET?: string;
  /** Comma-separated active e-sign secrets (rotation). */
  ESIGN_WEBHOOK_SECRETS?: string;
  STAFFING_WEBHOOK_SECRET?: string;
  /** Comma-separated active staffing secrets (rotation). */
  STAFFING_WEBHOOK_SECRETS?: string;
  /** `sha256:<hex>` of the admin API key (`gateway hash-key <key>`); several comma-separated. */
  GATEWAY_ADMIN_KEY_HASH?: string;
  /** `debug`, `info`, `warn`, `error` or `silent`. Default `info`. */
  GATEWAY_LOG_LEVEL?: string;
  /** The whole gateway config as JSON (sources, destinations, routes, clients, upstreams). */
  GATEWAY_CONFIG?: string;
  /** Number of store shards, 1..16 (fixed for a deployment). Default 1. */
  GATEWAY_STORE_SHARDS?: string;
}

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);

/**
 * The `${VAR}` references of a source's secrets: `PREFIX_SECRET` when set, then each entry of
 * `PREFIX_SECRETS` as a numbered variable added to `env` (so errors name a variable, never a value).
 */
function secretRefs(prefix: string, env: Record<string, string | undefined>): string[] {
  const refs: string[] = [];
  if (env[`${prefix}_SECRET`]) refs.push(`\${${prefix}_SECRET}`);
  list(env[`${prefix}_SECRETS`]).forEach((secret, i) => {
    const name = `${prefix}_SECRETS_${i + 1}`;
    env[name] = secret;
    refs.push(`\${${name}}`);
  });
  // Nothing set: reference the single binding so the error names it.
  return refs.length > 0 ? refs : [`\${${prefix}_SECRET}`];
}

/** Resolves and validates the Worker's config; throws `ConfigError` naming fields, never secrets. */
export function createWorkerConfig(vars: WorkerVars): GatewayConfig {
  const { raw, env } = assembleWorkerConfig(vars);
  return resolveConfig(raw, env);
}

/**
 * The raw config the Worker checks and the variables its `${VAR}` references resolve from, built
 * from the bindings: `gateway validate --workers` runs the same check (src/config/check-config.ts)
 * on a GATEWAY_CONFIG file with the environment as bindings. Throws `ConfigError` when
 * GATEWAY_CONFIG is not JSON.
 */
export function assembleWorkerConfig(vars: WorkerVars): { raw: unknown; env: Record<string, string | undefined> } {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(vars)) if (typeof value === "string") env[key] = value;
  let raw: Record<string, unknown>;
  if (env.GATEWAY_CONFIG) {
    try {
      raw = JSON.parse(env.GATEWAY_CONFIG) as Record<string, unknown>;
    } catch {
      throw new ConfigError(["GATEWAY_CONFIG: expected the gateway config as JSON"]);
    }
  } else {
    raw = {};
  }
  // Without `sources` in GATEWAY_CONFIG: the two sources, secrets from the bindings.
  raw.sources ??= [
    { id: "esign", service: "esign", secrets: secretRefs("ESIGN_WEBHOOK", env) },
    { id: "staffing", service: "staffing", secrets: secretRefs("STAFFING_WEBHOOK", env) },
  ];
  const adminHashes = list(env.GATEWAY_ADMIN_KEY_HASH);
  return {
    raw: {
      ...raw,
      store: { driver: "memory" },
      admin: adminHashes.length > 0 ? { apiKeyHashes: adminHashes } : (raw.admin ?? {}),
      log: { level: env.GATEWAY_LOG_LEVEL ?? (raw.log as { level?: string } | undefined)?.level ?? "info" },
    },
    env,
  };
}
