/**
 * When `gateway serve` is the zero-config development gateway (docs/configuration.md#fail-closed):
 * no `--config`, no `GATEWAY_CONFIG`, and none of the secret variables of the
 * default config set (not even empty). Only then are development secrets generated, printed and
 * the console offered the development admin key. Setting any one of them says "this is not a
 * throw-away gateway": every referenced variable must then be set, or start-up stops.
 */
import { CliFailure } from "./cli-errors.ts";

/** The secret variables of config/default.ts that development secrets stand in for. */
export const DEVELOPMENT_SECRET_VARIABLES = [
  "ESIGN_WEBHOOK_SECRET",
  "STAFFING_WEBHOOK_SECRET",
  "GATEWAY_ADMIN_KEY_HASH",
];

/** The zero-config gateway's store (and development secrets) directory. */
export const ZERO_CONFIG_DATA_DIR = ".data";

/** Whether `serve` without `--config` may generate development secrets in `env`. */
export function isZeroConfig(env: Record<string, string | undefined>): boolean {
  return env.GATEWAY_CONFIG === undefined && DEVELOPMENT_SECRET_VARIABLES.every((name) => env[name] === undefined);
}

/**
 * `GATEWAY_CONFIG` is the Workers binding; the Node gateway reads a file. Set without `--config`
 * it says a configuration was meant, which `serve` would otherwise silently replace by the
 * development one: refused instead.
 */
export function assertNoWorkersConfig(env: Record<string, string | undefined>): void {
  if (env.GATEWAY_CONFIG === undefined) return;
  throw new CliFailure(
    "GATEWAY_CONFIG is set, but on Node the configuration is a file: save it (JSON) and pass --config <file>, " +
      "or unset GATEWAY_CONFIG for the zero-config development gateway",
  );
}
