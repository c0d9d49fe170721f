/**
 * Turns a config file's value into a validated `GatewayConfig`: `${VAR}` references are replaced
 * from the given environment, then the result is checked with valibot (check-config.ts). Any
 * problem throws a `ConfigError` naming the exact field path and what was expected; start-up
 * stops there.
 */
import type { ServiceRegistry } from "../services/service-contract.ts";
import { checkConfig } from "./check-config.ts";
import type { GatewayConfig } from "./schema.ts";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/**
 * Validates a raw config object (from .ts or .json) against the schema, after env interpolation.
 * `services` are the upstream services sources and upstreams may name (default the built-in ones).
 */
export function resolveConfig(
  raw: unknown,
  env: Record<string, string | undefined>,
  services?: ServiceRegistry,
): GatewayConfig {
  const { config, problems } = checkConfig(raw, env, services);
  if (!config) throw new ConfigError(problems);
  return config;
}
