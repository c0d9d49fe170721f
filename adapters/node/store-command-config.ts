/**
 * The store section of a configuration file, for the commands that work on a store without
 * serving it (`gateway migrate`, `backup`, `restore`): the same file `serve` takes, but only
 * `store` is read and checked, so secrets the rest of the file needs may be absent.
 */
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { StoreConfig } from "../../src/config/schema.ts";
import { loadConfigFile } from "./load-config.ts";

/** The validated `store` of the config at `path` (none: the zero-config store, sqlite in `.data`). */
export async function loadStoreConfig(path: string | undefined): Promise<StoreConfig> {
  const raw = (await loadConfigFile(path)) as { store?: unknown } | undefined;
  return resolveConfig({ store: raw?.store, sources: [] }, process.env).store;
}

/** How the commands name a store in their one-line answers. */
export function describeStore(store: StoreConfig): string {
  if (store.driver === "sqlite" || store.driver === "disk") return `the sqlite store in ${store.dir}`;
  if (store.driver === "redis" || store.driver === "upstash")
    return `the ${store.driver} store (prefix "${store.prefix ?? "gw"}")`;
  return `the ${store.driver} store`;
}
