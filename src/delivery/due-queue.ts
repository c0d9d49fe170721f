/**
 * The waiting deliveries of one destination ordered by due time, then event log order: a binary
 * heap with lazy removal (re-queueing a key supersedes its earlier entry).
 */

interface Entry {
  readonly key: string;
  readonly at: number;
  readonly seq: number;
}

export interface DueQueue {
  /** Queues `key` due at `at`; replaces any earlier entry of the key. */
  push(key: string, at: number, seq: number): void;
  /** Forgets `key`. */
  remove(key: string): void;
  /** The earliest valid entry, without removing it (the queue's own entry: read it, never change it). */
  peek(): { readonly key: string; readonly at: number } | undefined;
  /** Removes and returns the earliest valid entry. */
  pop(): { readonly key: string; readonly at: number } | undefined;
  has(key: string): boolean;
  readonly size: number;
}

const before = (a: Entry, b: Entry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/** Creates an empty queue. */
export function createDueQueue(): DueQueue {
  const heap: Entry[] = [];
  const current = new Map<string, Entry>();

  const up = (i: number) => {
    const item = heap[i] as Entry;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(item, heap[parent] as Entry)) break;
      heap[i] = heap[parent] as Entry;
      i = parent;
    }
    heap[i] = item;
  };
  const down = (i: number) => {
    const item = heap[i] as Entry;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && before(heap[child + 1] as Entry, heap[child] as Entry)) child++;
      if (!before(heap[child] as Entry, item)) break;
      heap[i] = heap[child] as Entry;
      i = child;
    }
    heap[i] = item;
  };
  const popTop = () => {
    const last = heap.pop() as Entry;
    if (heap.length > 0) {
      heap[0] = last;
      down(0);
    }
  };
  /** Drops superseded entries from the top. */
  const clean = () => {
    while (heap.length > 0 && current.get((heap[0] as Entry).key) !== heap[0]) popTop();
  };

  return {
    push(key, at, seq) {
      const entry = { key, at, seq };
      current.set(key, entry);
      heap.push(entry);
      up(heap.length - 1);
      // Superseded entries are dropped lazily; rebuild when they dominate the heap.
      if (heap.length > 64 && heap.length > 4 * current.size) {
        const live = heap.filter((e) => current.get(e.key) === e);
        heap.length = 0;
        for (const e of live) {
          heap.push(e);
          up(heap.length - 1);
        }
      }
    },
    remove(key) {
      current.delete(key);
    },
    // The entries themselves (immutable): no object per call of the lane's pump.
    peek() {
      clean();
      return heap[0];
    },
    pop() {
      clean();
      const top = heap[0];
      if (!top) return undefined;
      popTop();
      current.delete(top.key);
      return top;
    },
    has: (key) => current.has(key),
    get size() {
      return current.size;
    },
  };
}
