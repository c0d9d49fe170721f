/**
 * What a reloaded configuration changes (SIGHUP, docs/configuration.md "Reloading"): the settings
 * that cannot change while the gateway runs, by field path, and per list (sources, destinations,
 * routes, clients, upstreams) the ids added, removed and changed. Only ids and field names are
 * reported, never values: a secret that changed shows as its destination or source "changed".
 */
import type { GatewayConfig } from "./schema.ts";

/**
 * Top-level sections applied only at start: the listener (address, port, its limits and
 * timeouts), the store and its hub, the log level, the operational events' watchers and whether
 * the test-event routes exist. A change there is refused by name; the rest applies live.
 */
const FIXED_SECTIONS = ["server", "store", "hub", "log", "operationalEvents", "testEvents"] as const;

/** Lists of the config with ids; a route without an id is named by its position. */
const LISTS = ["sources", "destinations", "routes", "clients", "upstreams"] as const;

/** Top-level settings reported by name when they change (applied live). */
const SETTINGS = [
  "admin",
  "auth",
  "ingress",
  "metrics",
  "retentionDays",
  "retention",
  "claimTtlSeconds",
] as const satisfies readonly (keyof GatewayConfig)[];

export interface ListChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface ConfigChanges {
  /** Field paths that changed but apply only at start (`server.port`, `store.dir`, ...). */
  fixed: string[];
  /** Per list, the ids added, removed and changed (empty lists left out). */
  lists: Partial<Record<(typeof LISTS)[number], ListChanges>>;
  /** Top-level settings that changed (applied live). */
  settings: string[];
  /** True when nothing differs. */
  none: boolean;
}

const same = (a: unknown, b: unknown) => stableJson(a) === stableJson(b);

/** JSON with object keys sorted, so key order in the file does not count as a change. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : item,
  );
}

/** The leaf paths under `prefix` where `a` and `b` differ (objects compared key by key). */
function changedPaths(prefix: string, a: unknown, b: unknown, out: string[]): void {
  if (same(a, b)) return;
  const isObject = (x: unknown): x is Record<string, unknown> => !!x && typeof x === "object" && !Array.isArray(x);
  if (!isObject(a) || !isObject(b)) {
    out.push(prefix);
    return;
  }
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
    changedPaths(`${prefix}.${key}`, a[key], b[key], out);
}

function keyed(items: readonly unknown[]): Map<string, unknown> {
  const map = new Map<string, unknown>();
  items.forEach((item, i) => {
    const id = (item as { id?: unknown }).id;
    map.set(typeof id === "string" ? id : `#${i}`, item);
  });
  return map;
}

function diffList(before: readonly unknown[], after: readonly unknown[]): ListChanges {
  const a = keyed(before);
  const b = keyed(after);
  const changes: ListChanges = { added: [], removed: [], changed: [] };
  for (const [id, item] of b) {
    if (!a.has(id)) changes.added.push(id);
    else if (!same(a.get(id), item)) changes.changed.push(id);
  }
  for (const id of a.keys()) if (!b.has(id)) changes.removed.push(id);
  return changes;
}

/** Compares the running configuration with a reloaded one. */
export function describeConfigChanges(before: GatewayConfig, after: GatewayConfig): ConfigChanges {
  const fixed: string[] = [];
  for (const section of FIXED_SECTIONS) changedPaths(section, before[section], after[section], fixed);
  const lists: ConfigChanges["lists"] = {};
  for (const list of LISTS) {
    const changes = diffList(before[list], after[list]);
    if (changes.added.length + changes.removed.length + changes.changed.length > 0) lists[list] = changes;
  }
  const settings = SETTINGS.filter((key) => !same(before[key], after[key]));
  return {
    fixed,
    lists,
    settings,
    none: fixed.length === 0 && Object.keys(lists).length === 0 && settings.length === 0,
  };
}
