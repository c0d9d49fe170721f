/**
 * Which sink transport delivers a destination, on every runtime (the Node sink registry,
 * adapters/sink/registry.ts, and the Workers one, adapters/cloudflare/worker-sink-registry.ts,
 * are keyed by these names).
 */
/** The transport of each destination type that has none named. `stream` is the live stream's. */
export const defaultTransports: Readonly<Record<string, string>> = {
  http: "http",
  queue: "redis-stream",
  email: "smtp",
};

/**
 * The transport that delivers a destination, on every runtime: the one its `transport` field
 * names, else its type's default; undefined for `stream` and for a type with neither.
 */
export function transportOf(destination: { type: string }): string | undefined {
  if (destination.type === "stream") return undefined;
  const named = (destination as { transport?: unknown }).transport;
  return typeof named === "string" ? named : defaultTransports[destination.type];
}
