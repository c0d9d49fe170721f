/**
 * The one check of a configuration, shared by everything that accepts one: `gateway serve` before
 * it opens anything, `gateway validate`, the Worker's bindings (adapters/cloudflare/worker-config.ts)
 * and any later re-read of the file. It never throws and never touches a store, a port or the
 * network: it returns the validated config (when there is no problem), every problem named by
 * its field path, and warnings (a valid config that probably does not do what was meant).
 *
 * A `${VAR}` reference whose variable is unset or empty is a problem (configuration.md, "fail
 * closed"): nothing is generated in its place here. Only the zero-config development start
 * (adapters/node/serve-command.ts) fills its three secret variables before calling this.
 */
import * as v from "valibot";
import { builtinServices } from "../services/registry.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import { createGatewayConfigSchema, type GatewayConfig, GatewayConfigSchema } from "./schema.ts";
import { missingUpstreamFields } from "./upstreams-schema.ts";

export interface ConfigCheck {
  /** The validated config with its defaults; undefined when there is any problem. */
  config?: GatewayConfig;
  /** `field.path: what is wrong`, one per problem, in the config's order. */
  problems: string[];
  /** `field.path: why it is probably not what was meant`; the config is still valid. */
  warnings: string[];
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const TRANSFORM_CODE_PATH = /^destinations\.\d+\.transform\.code$/;

interface Missing {
  path: string;
  problem: string;
}

/** Replaces `${VAR}` in every string of `value`; collects the paths of unset or empty variables. */
function interpolate(
  value: unknown,
  env: Record<string, string | undefined>,
  path: string,
  missing: Missing[],
): unknown {
  // A transform's module is code, not configuration: `${name}` there is a template literal.
  if (typeof value === "string" && TRANSFORM_CODE_PATH.test(path)) return value;
  if (typeof value === "string") {
    return value.replace(ENV_REF, (_, name: string) => {
      const found = env[name];
      if (found === undefined || found === "") {
        const state = found === undefined ? "is not set" : "is empty";
        missing.push({ path, problem: `${path || "(root)"}: environment variable ${name} ${state}` });
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
 * Checks a raw config (a config file's value, or GATEWAY_CONFIG parsed) against `env`: `${VAR}`
 * resolution, the schema (transform modules and filters included) and the cross-references.
 * `services` are the upstream services sources and upstreams may name (default the built-in ones).
 */
export function checkConfig(
  raw: unknown,
  env: Record<string, string | undefined>,
  services: ServiceRegistry = builtinServices,
): ConfigCheck {
  const missing: Missing[] = [];
  const interpolated = interpolate(raw, env, "", missing);
  const schema = services === builtinServices ? GatewayConfigSchema : createGatewayConfigSchema(services);
  const result = v.safeParse(schema, interpolated);
  // A field whose variable is missing is reported once, as missing, not again as an empty value.
  const underMissing = (path: string) =>
    missing.some((m) => path === m.path || path.startsWith(`${m.path}.`) || m.path.startsWith(`${path}.`));
  const schemaProblems = result.success
    ? []
    : result.issues
        .map((issue) => ({ path: v.getDotPath(issue) ?? "(root)", issue }))
        .filter(({ path }) => !underMissing(path))
        .map(({ path, issue }) => `${path}: ${describeIssue(issue, path)}`);
  const problems = [...missing.map((m) => m.problem), ...schemaProblems];
  if (problems.length > 0 || !result.success) return { problems, warnings: [] };
  return { config: result.output, problems: [], warnings: warningsOf(result.output, services) };
}

/** What a valid config probably did not mean. */
function warningsOf(config: GatewayConfig, services: ServiceRegistry): string[] {
  const warnings: string[] = [];
  if (config.store.driver === "memory") {
    warnings.push("store.driver: memory keeps events in this process only; a restart loses them");
  }
  if (config.admin.apiKeyHashes.length === 0) {
    warnings.push("admin.apiKeyHashes: none, so no admin key can read the event log, metrics or the console");
  }
  const routed = new Set(config.routes.flatMap((route) => route.destinations));
  config.destinations.forEach((destination, i) => {
    if (!routed.has(destination.id)) {
      warnings.push(`destinations.${i}: no route names "${destination.id}", so it receives nothing`);
    }
  });
  config.upstreams.forEach((upstream, i) => {
    const missingFields = missingUpstreamFields(upstream, services);
    if (missingFields.length > 0) {
      warnings.push(
        `upstreams.${i}: ${missingFields.join(", ")} unset, so /api/${upstream.id}/ answers 503 until they are`,
      );
    }
  });
  return warnings;
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
