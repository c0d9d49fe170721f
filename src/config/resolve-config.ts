/**
 * Turns a config file's value into a validated `GatewayConfig`: `${VAR}` references are replaced
 * from the given environment, then the result is checked with valibot. Any problem throws a
 * `ConfigError` naming the exact field path and what was expected; start-up stops there.
 */
import * as v from "valibot";
import { builtinServices } from "../services/registry.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import { createGatewayConfigSchema, type GatewayConfig, GatewayConfigSchema } from "./schema.ts";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const TRANSFORM_CODE_PATH = /^destinations\.\d+\.transform\.code$/;

/** Replaces `${VAR}` in every string of `value`; collects the paths of missing variables. */
function interpolate(
  value: unknown,
  env: Record<string, string | undefined>,
  path: string,
  missing: string[],
): unknown {
  // A transform's module is code, not configuration: `${name}` there is a template literal.
  if (typeof value === "string" && TRANSFORM_CODE_PATH.test(path)) return value;
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

/**
 * Validates a raw config object (from .ts or .json) against the schema, after env interpolation.
 * `services` are the upstream services sources and upstreams may name (default the built-in ones).
 */
export function resolveConfig(
  raw: unknown,
  env: Record<string, string | undefined>,
  services: ServiceRegistry = builtinServices,
): GatewayConfig {
  const missing: string[] = [];
  const interpolated = interpolate(raw, env, "", missing);
  if (missing.length > 0) throw new ConfigError(missing);
  const schema = services === builtinServices ? GatewayConfigSchema : createGatewayConfigSchema(services);
  const result = v.safeParse(schema, interpolated);
  if (!result.success) {
    throw new ConfigError(
      result.issues.map((issue) => {
        const path = v.getDotPath(issue) ?? "(root)";
        return `${path}: ${describeIssue(issue, path)}`;
      }),
    );
  }
  return result.output;
}

// Fields whose values are secrets: a problem there is described without echoing the value.
const SECRET_PATH = /secret/i;

function describeIssue(issue: v.BaseIssue<unknown>, path: string): string {
  // Strict objects report an unknown key as "Expected never"; a missing key as "Invalid key".
  if (issue.expected === "never") return `unknown key ${issue.received} (not a field here; check the spelling)`;
  if (issue.message.startsWith("Invalid key")) return "expected a value, received none (this field is required)";
  const echoesSecret =
    SECRET_PATH.test(path) &&
    (typeof issue.input === "string" || typeof issue.input === "number") &&
    issue.received.includes(String(issue.input));
  const received = echoesSecret ? "a value not shown here (secret)" : issue.received;
  // valibot's messages read "Invalid type: Expected number but received "x""; keep them, they
  // say what was expected and what was found. Custom messages (on actions or on schemas such as
  // a picklist) name the expectation directly.
  if (!issue.message.startsWith("Invalid")) {
    return issue.type === "raw_check" ? `expected ${issue.message}` : `expected ${issue.message}, received ${received}`;
  }
  return echoesSecret
    ? `${issue.message.replace(/ but received [\s\S]*$/, "")} but received ${received}`
    : issue.message;
}
