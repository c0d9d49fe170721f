/**
 * Where a piece of state lives among the store's Durable Object shards, and how a shard numbers
 * its events so that one global `seq` orders the events of every shard
 * (docs/cloudflare-workers.md#scale-plan).
 *
 * - Events and dedupe marks of one source live in one shard: `shardOf(sourceId)`, so a claim and
 *   the append that replaces it are one object's single-threaded step (atomic, no cross-object
 *   transaction). kv entries are placed by a hash of their key.
 * - With one shard, seq is a plain counter. With `count` > 1 shards, seq = tick * count + index:
 *   unique across shards by its low part, strictly increasing within a shard, and `tick` follows
 *   the clock (`(now - SEQ_EPOCH_MS) * TICKS_PER_MS`, or last tick + 1 when faster), so the merged
 *   order of all shards is the receive order up to clock skew between Workers. Seqs stay below
 *   10^15 (the API's 15-digit cursors) for a century with 16 shards.
 * - A reader that needs an exact cursor (readAfter: the outbox router and live-stream resume)
 *   first "seals" a tick M on every shard (a shard promises to number later events above M) and
 *   then reads only seq <= the end of tick M: nothing can be numbered behind such a cursor later.
 */

/** Clock ticks per millisecond: a shard numbers up to 16,000 events/s before running ahead of the clock. */
export const TICKS_PER_MS = 16;

/** Ticks count from 2026-01-01T00:00:00Z. */
export const SEQ_EPOCH_MS = Date.UTC(2026, 0, 1);

/** The most shards the seq encoding supports (seq < 10^15 until 2149). */
export const MAX_SHARDS = 16;

/** FNV-1a 32-bit hash of a string (stable across isolates and deployments). */
export function hashString(value: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) {
    hash ^= value.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The shard index of a key among `count` shards. */
export function shardOf(key: string, count: number): number {
  return count === 1 ? 0 : hashString(key) % count;
}

/** The source id part of a dedupe key (`${sourceId}\u0000${identity}`, src/store/contract.ts). */
export function sourceOfDedupeKey(dedupeKey: string): string {
  const end = dedupeKey.indexOf("\u0000");
  return end === -1 ? dedupeKey : dedupeKey.slice(0, end);
}

/** A shard's place: its index and the number of shards. */
export interface ShardPlace {
  index: number;
  count: number;
}

/** The tick a seq was assigned in. */
export function tickOf(seq: number, count: number): number {
  return Math.floor(seq / count);
}

/** The highest seq any shard can assign within tick `tick`. */
export function lastSeqOfTick(tick: number, count: number): number {
  return (tick + 1) * count - 1;
}

/**
 * The next seq of a shard whose highest assigned seq is `last`, given the caller's clock and the
 * highest seq the caller has seen (`floor`: sequential appends through one driver stay ordered).
 */
export function nextSeq(place: ShardPlace, last: number, floor: number, now: number): number {
  if (place.count === 1) return Math.max(last, floor) + 1;
  const clockTick = (now - SEQ_EPOCH_MS) * TICKS_PER_MS;
  const tick = Math.max(tickOf(last, place.count) + 1, tickOf(floor, place.count) + 1, clockTick);
  return tick * place.count + place.index;
}
