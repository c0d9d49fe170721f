/**
 * Loads a configuration file for the Node runtime: `.ts`/`.mts`/`.js` modules (default export,
 * usually `defineConfig({...})`) or `.json`. With no file, the default config in `config/`.
 */
import { readFile } from "node:fs/promises";
import { dirname, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../../src/config/resolve-config.ts";

/** This file runs compiled (dist/, plain Node: bin/compiled-sources.js) rather than as TypeScript (tsx, vitest). */
const COMPILED = import.meta.url.endsWith(".js");

export const DEFAULT_CONFIG_PATH = new URL(`../../config/default.${COMPILED ? "js" : "ts"}`, import.meta.url);

let typescript: Promise<unknown> | undefined;

/**
 * Imports a config module. A config may be TypeScript and import the sources (`defineConfig`
 * from src/config/schema.ts), as it may when the sources run under tsx: the compiled gateway
 * registers tsx before the first one (a scoped registration does not resolve every import a
 * config file may make, e.g. a `file:` URL from a folder without package.json).
 */
async function importModule(url: string): Promise<{ default?: unknown; config?: unknown }> {
  if (COMPILED) {
    typescript ??= import("tsx/esm/api").then(({ register }) => register());
    await typescript;
  }
  return import(url);
}

/**
 * Reads the raw (not yet validated) config value of `path`. `fresh`: read a module file again
 * rather than the copy imported before (a reload).
 */
export async function loadConfigFile(path?: string, reading?: { fresh: boolean }): Promise<unknown> {
  if (!path) return (await import(DEFAULT_CONFIG_PATH.href)).default;
  const absolute = resolve(path);
  return inlineTransformFiles(await readConfigValue(path, absolute, reading?.fresh ?? false), dirname(absolute));
}

let reads = 0;

async function readConfigValue(path: string, absolute: string, fresh: boolean): Promise<unknown> {
  const ext = extname(absolute);
  try {
    if (ext === ".json") return JSON.parse(await readFile(absolute, "utf8"));
    if ([".ts", ".mts", ".js", ".mjs"].includes(ext)) {
      // A module is imported once per URL: a reload asks for a new URL of the same file.
      const mod = await importModule(`${pathToFileURL(absolute).href}${fresh ? `?reload=${++reads}` : ""}`);
      return mod.default ?? mod.config;
    }
  } catch (cause) {
    throw new ConfigError([`${path}: cannot be read (${cause instanceof Error ? cause.message : String(cause)})`]);
  }
  throw new ConfigError([`${path}: expected a .ts, .mts, .js, .mjs or .json file`]);
}

/**
 * Reads each destination's `transform.file` (relative to the config file's directory) into
 * `transform.code`, keeping `file` so errors and `gateway transform test` can name it.
 */
export async function inlineTransformFiles(raw: unknown, baseDir: string): Promise<unknown> {
  const destinations = (raw as { destinations?: unknown } | null)?.destinations;
  if (!Array.isArray(destinations)) return raw;
  const problems: string[] = [];
  const inlined = await Promise.all(
    destinations.map(async (destination: unknown, i) => {
      const transform = (destination as { transform?: { file?: unknown; code?: unknown } } | null)?.transform;
      if (!transform || typeof transform.file !== "string" || transform.code !== undefined) return destination;
      try {
        const code = await readFile(resolve(baseDir, transform.file), "utf8");
        return { ...(destination as object), transform: { ...transform, code } };
      } catch (cause) {
        const why = cause instanceof Error && "code" in cause ? String(cause.code) : String(cause);
        problems.push(`destinations.${i}.transform.file: cannot read ${transform.file} (${why})`);
        return destination;
      }
    }),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...(raw as object), destinations: inlined };
}

/** The sqlite (alias disk) store directory of a raw config, if any (where dev secrets are kept). */
export function dataDirOf(raw: unknown): string | undefined {
  const store = (raw as { store?: { driver?: string; dir?: string } } | undefined)?.store;
  if (!store || store.driver === "disk" || store.driver === "sqlite") return store?.dir ?? ".data";
  return undefined;
}
