/**
 * Reads dot paths (`data.candidate.name`, `data.participants.0.email`, `data.participants.*.email`)
 * from a CloudEvent for templates and recipient fields. Only own properties are followed, so a
 * path can never reach `__proto__`, `constructor` or anything else outside the event's JSON.
 */

/** One path segment: letters, digits, `_`, `-`, or `*` (every item of an array or object). */
export const PATH_PATTERN = /^(?:[A-Za-z0-9_-]+|\*)(?:\.(?:[A-Za-z0-9_-]+|\*))*$/;

function step(value: unknown, key: string): unknown[] {
  if (value === null || typeof value !== "object") return [];
  if (key === "*") return Object.values(value);
  if (Array.isArray(value)) return /^\d+$/.test(key) && Number(key) < value.length ? [value[Number(key)]] : [];
  return Object.hasOwn(value, key) ? [(value as Record<string, unknown>)[key]] : [];
}

/**
 * Every value `path` reaches in `root`, in document order. A path without `*` yields at most
 * one value; a missing step yields none.
 */
export function collectEventPath(root: unknown, path: string): unknown[] {
  let current: unknown[] = [root];
  for (const key of path.split(".")) current = current.flatMap((value) => step(value, key));
  return current;
}

/** The single value at `path`, or undefined. With `*`, the list of values reached. */
export function readEventPath(root: unknown, path: string): unknown {
  const values = collectEventPath(root, path);
  return path.split(".").includes("*") ? values : values[0];
}
