/**
 * Everything `gateway serve --config <file>` checks before it opens the store or a port, as one
 * call: the file is read (transform modules inlined), `${VAR}` references resolved from `env`,
 * the schema, cross-references, transform modules and filters checked (src/config/check-config.ts),
 * and the sqlite `store.dir` inspected without creating anything. Used by `gateway validate`;
 * a reload of the file reuses it. With `workers`, the file is checked as the Worker checks its
 * `GATEWAY_CONFIG` binding, `env` standing for the Worker's other bindings.
 */
import { readFile } from "node:fs/promises";
import { type ConfigCheck, checkConfig } from "../../src/config/check-config.ts";
import { ConfigError } from "../../src/config/resolve-config.ts";
import { assembleWorkerConfig } from "../cloudflare/worker-config.ts";
import { inspectStoreDir } from "../store/sqlite/private-dir.ts";
import { readOtelEnv } from "../tracing/read-otel-env.ts";
import { loadConfigFile } from "./load-config.ts";

export async function checkConfigFile(
  path: string,
  env: Record<string, string | undefined>,
  options: { workers?: boolean } = {},
): Promise<ConfigCheck> {
  try {
    if (options.workers) return await checkWorkersConfigFile(path, env);
    const result = checkConfig(await loadConfigFile(path), env);
    // `serve` reads the OTEL_* variables before anything opens: a bad value stops it too.
    const tracingProblems = otelProblems(env);
    if (tracingProblems.length > 0)
      return { problems: [...result.problems, ...tracingProblems], warnings: result.warnings };
    const store = result.config?.store;
    if (store && (store.driver === "sqlite" || store.driver === "disk")) {
      const problem = await inspectStoreDir(store.dir);
      if (problem) return { problems: [`store.dir: ${problem}`], warnings: result.warnings };
    }
    return result;
  } catch (error) {
    if (error instanceof ConfigError) return { problems: error.problems, warnings: [] };
    throw error;
  }
}

/** The file as the Worker's GATEWAY_CONFIG (JSON only, no `transform.file`), `env` as its bindings. */
async function checkWorkersConfigFile(path: string, env: Record<string, string | undefined>): Promise<ConfigCheck> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    const code = (cause as { code?: string }).code ?? String(cause);
    return { problems: [`${path}: cannot be read (${code})`], warnings: [] };
  }
  const { raw, env: bindings } = assembleWorkerConfig({ ...env, GATEWAY_CONFIG: text });
  const result = checkConfig(raw, bindings);
  // The Worker's store is always its Durable Objects, whatever the file says.
  return { ...result, warnings: result.warnings.filter((warning) => !warning.startsWith("store.")) };
}

/** The problems of the OTEL_* variables (docs/tracing.md), as `serve` would refuse them. */
function otelProblems(env: Record<string, string | undefined>): string[] {
  try {
    readOtelEnv(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}
