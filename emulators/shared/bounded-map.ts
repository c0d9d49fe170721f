/**
 * A Map that keeps at most `max` entries, dropping the oldest inserted first: the emulators keep
 * all state in memory, and every collection of it is bounded.
 */

export interface BoundedMap<K, V> extends Map<K, V> {
  readonly max: number;
}

/** A bounded Map; `onEvict` sees each dropped entry. */
export function createBoundedMap<K, V>(max: number, onEvict?: (key: K, value: V) => void): BoundedMap<K, V> {
  const map = new Map<K, V>() as BoundedMap<K, V>;
  const set = map.set.bind(map);
  Object.defineProperty(map, "max", { value: max });
  map.set = (key: K, value: V) => {
    if (!map.has(key)) {
      while (map.size >= max) {
        const oldest = map.keys().next();
        if (oldest.done) break;
        const dropped = map.get(oldest.value) as V;
        map.delete(oldest.value);
        onEvict?.(oldest.value, dropped);
      }
    }
    return set(key, value);
  };
  return map;
}

/** Pushes to an array, dropping from the front beyond `max`. */
export function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
}
