/**
 * A Bloom filter over the dedupe mark keys of the sqlite store, so that `claim` of an identity
 * never recorded (nearly every webhook) answers without a read of the database. "Maybe" falls
 * back to the read, so a false positive costs only that read; there are no false negatives once
 * the filter is ready, because every key is added before its mark can be written (`add` at append)
 * and the marks already on disk are added by `fill` in small chunks between requests. Until
 * `fill` finished, every key is a "maybe". Keys are never removed: expired marks become false
 * positives, and a filter past its capacity degrades towards always reading, never towards wrong.
 */
import type { Database } from "better-sqlite3";
import { statementOn } from "./retained-statements.ts";

/** 2^24 bits (2 MiB): about 0.06 % false positives at a million marks, 7 probes. */
const BITS = 1 << 24;
const PROBES = 7;
/** Keys read per turn of the event loop while filling (about a millisecond each). */
const FILL_CHUNK = 1000;

export interface MarkFilter {
  /** Records a key whose mark is about to be written. */
  add(key: string): void;
  /** False only when the key certainly has no mark. */
  mightHave(key: string): boolean;
  /** Reads the keys of the marks on disk, a chunk per turn of the event loop; the filter is ready after. */
  fill(db: Database, isClosed: () => boolean): Promise<void>;
}

/** Two 32-bit FNV-1a hashes of `key` (different offsets), the second odd, for double hashing. */
function hashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return [a >>> 0, (b | 1) >>> 0];
}

/** Creates an empty filter (not ready until `fill` resolved). */
export function createMarkFilter(): MarkFilter {
  const words = new Uint32Array(BITS / 32);
  let ready = false;
  const set = (key: string) => {
    const [h1, h2] = hashes(key);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & (BITS - 1);
      words[bit >>> 5] = (words[bit >>> 5] as number) | (1 << (bit & 31));
    }
  };
  return {
    add: set,
    mightHave(key) {
      if (!ready) return true;
      const [h1, h2] = hashes(key);
      for (let i = 0; i < PROBES; i++) {
        const bit = (h1 + Math.imul(i, h2)) & (BITS - 1);
        if (((words[bit >>> 5] as number) & (1 << (bit & 31))) === 0) return false;
      }
      return true;
    },
    async fill(db, isClosed) {
      const page = statementOn(db, "SELECT key FROM marks WHERE key > ? ORDER BY key LIMIT ?").pluck();
      let after = "";
      for (;;) {
        if (isClosed()) return;
        const keys = page.all(after, FILL_CHUNK) as string[];
        for (const key of keys) set(key);
        if (keys.length < FILL_CHUNK) break;
        after = keys[keys.length - 1] as string;
        await new Promise((resolve) => setImmediate(resolve));
      }
      ready = true;
    },
  };
}
