/**
 * Loads a configuration file for the Node runtime: `.ts`/`.mts`/`.js` modules (default export,
 * usually `defineConfig({...})`) or `.json`. With no file, the default config in `config/`.
 */
import { readFile } from "node:fs/promises";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "../../src/config/resolve-config.ts";

export const DEFAULT_CONFIG_PATH = new URL("../../config/default.ts", import.meta.url);

/** Reads the raw (not yet validated) config value of `path`. */
export async function loadConfigFile(path?: string): Promise<unknown> {
  if (!path) return (await import(DEFAULT_CONFIG_PATH.href)).default;
  const absolute = resolve(path);
  const ext = extname(absolute);
  try {
    if (ext === ".json") return JSON.parse(await readFile(absolute, "utf8"));
    if ([".ts", ".mts", ".js", ".mjs"].includes(ext)) {
      const mod = await import(pathToFileURL(absolute).href);
      return mod.default ?? mod.config;
    }
  } catch (cause) {
    throw new ConfigError([`${path}: cannot be read (${cause instanceof Error ? cause.message : String(cause)})`]);
  }
  throw new ConfigError([`${path}: expected a .ts, .mts, .js, .mjs or .json file`]);
}

/** The sqlite (alias disk) store directory of a raw config, if any (where dev secrets are kept). */
export function dataDirOf(raw: unknown): string | undefined {
  const store = (raw as { store?: { driver?: string; dir?: string } } | undefined)?.store;
  if (!store || store.driver === "disk" || store.driver === "sqlite") return store?.dir ?? ".data";
  return undefined;
}
