/**
 * Turns a config file's value into a validated `GatewayConfig`: `${VAR}` references are replaced
 * from the given environment, then the result is checked with valibot. Any problem throws a
 * `ConfigError` naming the exact field path and what was expected; start-up stops there.
 */
import * as v from "valibot";
import { type GatewayConfig, GatewayConfigSchema } from "./schema.ts";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Replaces `${VAR}` in every string of `value`; collects the paths of missing variables. */
function interpolate(
  value: unknown,
  env: Record<string, string | undefined>,
  path: string,
  missing: string[],
): unknown {
  if (typeof value === "string") {
    return value.replace(ENV_REF, (_, name: string) => {
      const found = env[name];
      if (found === undefined || found === "") {
        missing.push(`${path}: environment variable ${name} is not set`);
        return "";
      }
      return found;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, `${path}.${i}`, missing));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = interpolate(item, env, path ? `${path}.${key}` : key, missing);
    }
    return out;
  }
  return value;
}

/** Validates a raw config object (from .ts or .json) against the schema, after env interpolation. */
export function resolveConfig(raw: unknown, env: Record<string, string | undefined>): GatewayConfig {
  const missing: string[] = [];
  const interpolated = interpolate(raw, env, "", missing);
  if (missing.length > 0) throw new ConfigError(missing);
  const result = v.safeParse(GatewayConfigSchema, interpolated);
  if (!result.success) {
    throw new ConfigError(result.issues.map((issue) => `${v.getDotPath(issue) ?? "(root)"}: ${describeIssue(issue)}`));
  }
  return result.output;
}

function describeIssue(issue: v.BaseIssue<unknown>): string {
  // valibot's messages read "Invalid type: Expected number but received "x""; keep them, they
  // say what was expected and what was found. Custom messages name the expectation directly.
  if (issue.kind === "validation" && !issue.message.startsWith("Invalid")) {
    return issue.type === "raw_check"
      ? `expected ${issue.message}`
      : `expected ${issue.message}, received ${issue.received}`;
  }
  return issue.message;
}
