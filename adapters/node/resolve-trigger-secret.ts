/**
 * Which secret `gateway trigger` signs with, and where it came from. The rule: the variable the
 * source's first secret references, from the environment; only when the target is the
 * zero-config gateway (no `--config`, a loopback URL) and the variable is unset, the development
 * secret that gateway generated in `.data/dev-secrets.json`. Anything else is a missing secret,
 * reported with where it was looked for. Never creates development secrets.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CliFailure } from "./cli-errors.ts";

export interface TriggerSecret {
  /** The resolved raw secret entry (`${VAR}` replaced). */
  value: string;
  /** Where it came from, for the user (never the secret itself). */
  from: string;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** Reads a development secret without creating the file; undefined when there is none. */
async function readDevSecret(dataDir: string, name: string): Promise<string | undefined> {
  try {
    const secrets = JSON.parse(await readFile(join(dataDir, "dev-secrets.json"), "utf8")) as Record<string, unknown>;
    const value = secrets[name];
    return typeof value === "string" && value.length > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves `entry` (a source's first `secrets` item, e.g. `${STAFFING_WEBHOOK_SECRET}`) at
 * `field` (`sources.1.secrets.0`) of `configName`.
 */
export async function resolveTriggerSecret(options: {
  entry: string;
  field: string;
  configName: string;
  zeroConfig: boolean;
  dataDir: string | undefined;
  targetUrl: string;
  env: Record<string, string | undefined>;
}): Promise<TriggerSecret> {
  const names = [...options.entry.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
  if (names.length === 0) return { value: options.entry, from: `${options.field} of ${options.configName}` };
  const unset = names.filter((name) => !options.env[name]);
  if (unset.length === 0) {
    return { value: substitute(options.entry, options.env), from: `${names.join(", ")} from the environment` };
  }
  const loopback = LOOPBACK.has(new URL(options.targetUrl).hostname);
  if (options.zeroConfig && loopback && options.dataDir && names.length === 1) {
    const name = names[0] as string;
    const dev = await readDevSecret(options.dataDir, name);
    if (dev) {
      return {
        value: dev,
        from: `${name} of ${join(options.dataDir, "dev-secrets.json")} (the zero-config gateway's development secret; ${name} is unset)`,
      };
    }
    throw new CliFailure(
      `missing secret: ${name} is not set and ${join(options.dataDir, "dev-secrets.json")} has none ` +
        `(start the zero-config gateway once with \`npm start\`, or set ${name})`,
    );
  }
  const why = options.zeroConfig
    ? " (development secrets are used only for the zero-config gateway on a loopback address)"
    : "";
  throw new CliFailure(
    `missing secret: ${unset.join(", ")} ${unset.length > 1 ? "are" : "is"} not set ` +
      `(${options.field} of ${options.configName} reads it); set it to the secret the gateway runs with${why}`,
  );
}

function substitute(entry: string, env: Record<string, string | undefined>): string {
  return entry.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? "");
}
